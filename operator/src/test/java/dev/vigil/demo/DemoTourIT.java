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
 * demo rots, this fails with the first unmet expectation.
 */
class DemoTourIT {

  @Test
  void theTourHoldsEveryExpectationItPrints() {
    ByteArrayOutputStream buffer = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(buffer, true, StandardCharsets.UTF_8);
    DemoOptions options = new DemoOptions(4, "tour", 240_000, 2, false, false);

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
  }
}
