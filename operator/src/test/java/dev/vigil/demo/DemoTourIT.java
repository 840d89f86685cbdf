package dev.vigil.demo;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.demo.Timeline.Row;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The demo's tour, fast and small, with the same expectations the demo prints: if a rule or the
 * demo rots, this fails with the first unmet expectation. The expectations live in production code
 * ({@code Scenarios}), so the critical ones are pinned here as well, from the example's settings
 * and a slack of this test's own: loosening the demo's bounds does not loosen this test.
 */
class DemoTourIT {
  /** Publishing and observing, on a loaded machine: the demo's own slack when this was written. */
  private static final long PINNED_SLACK_MS = 2_000;

  private static final int SPEED = 2;

  @Test
  void theTourHoldsEveryExpectationItPrints() {
    ByteArrayOutputStream buffer = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(buffer, true, StandardCharsets.UTF_8);
    DemoOptions options = new DemoOptions(4, "tour", 240_000, SPEED, false, false);

    DemoCommand.Result result = DemoCommand.run(options, out);

    String printed = buffer.toString(StandardCharsets.UTF_8);
    assertThat(result.unmet()).as(printed).isNull();
    assertThat(result.exitCode()).isZero();
    assertThat(printed)
        .contains("PASSED: every expectation of scenario tour held")
        .contains("NAME  POLICY  AVAILABLE  TOTAL  EJECTED  PANIC  AGE")
        .contains("EndpointSlice ready set")
        .contains("Events");
    List<String> steps = result.rows().stream().map(Row::step).distinct().toList();
    assertThat(steps)
        .containsExactly("start", "down", "flap", "passive", "panic", "cap", "damping");
    assertThat(result.rows()).allMatch(Row::held);

    // The web example at speed 2: interval 2 s scaled to 500 ms, rise 2, fall 3.
    DemoExamples ex = DemoExamples.load(SPEED);
    assertThat(ex.intervalMs()).isEqualTo(500);
    assertThat(ex.rise()).isEqualTo(2);
    assertThat(ex.fall()).isEqualTo(3);
    assertThat(measured(result, "down", "dies"))
        .as("a dead backend leaves after fall probes")
        .isBetween(lower(ex, ex.fall()), upper(ex, ex.fall()));
    assertThat(measured(result, "down", "heals"))
        .as("a healed backend returns after rise probes")
        .isBetween(lower(ex, ex.rise()), upper(ex, ex.rise()));
  }

  private static long measured(DemoCommand.Result result, String step, String whatContains) {
    return result.rows().stream()
        .filter(r -> r.step().equals(step) && r.what().contains(whatContains))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no row " + step + " / " + whatContains))
        .measuredMs();
  }

  /** {@code probes - 1} intervals, all jittered short: the earliest a rule may act. */
  private static long lower(DemoExamples ex, int probes) {
    return Math.round((probes - 1) * ex.intervalMs() * (1 - ex.jitterPercent() / 100.0));
  }

  /** {@code probes} intervals jittered long, one timeout, and this test's slack. */
  private static long upper(DemoExamples ex, int probes) {
    return Math.round(probes * ex.intervalMs() * (1 + ex.jitterPercent() / 100.0))
        + ex.timeoutMs()
        + ex.intervalMs()
        + PINNED_SLACK_MS;
  }
}
