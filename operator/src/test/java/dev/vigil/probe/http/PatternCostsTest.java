package dev.vigil.probe.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.re2j.Pattern;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * A pattern whose matches cost too much CPU is refused for a while, then measured again; cheap ones
 * always run. The cost is injected: each match "spends" what the test sets.
 */
class PatternCostsTest {
  private final AtomicLong cpu = new AtomicLong();
  private final AtomicLong now = new AtomicLong(1_000);
  private long costPerMatch;
  private final PatternCosts costs = new PatternCosts(() -> cpu.addAndGet(costPerMatch), now::get);
  private final Pattern healthy = Pattern.compile("healthy");

  @Test
  void aCheapPatternAlwaysRuns() {
    costPerMatch = 100_000; // 0.1 ms
    for (int i = 0; i < 1_000; i++) {
      assertThat(costs.find(healthy, "i am healthy")).isEqualTo(PatternCosts.Found.YES);
      assertThat(costs.find(healthy, "i am not")).isEqualTo(PatternCosts.Found.NO);
    }
  }

  @Test
  void aCostlyPatternIsRefusedAtOnceThenTriedAgainAfterItsPause() {
    costPerMatch = 13_000_000; // (.*a){12}$ on 4 KiB of "a"
    assertThat(costs.find(healthy, "healthy").found()).as("this match ran").isTrue();
    PatternCosts.Found refused = costs.find(healthy, "healthy");
    assertThat(refused.found()).isFalse();
    assertThat(refused.refusal())
        .isEqualTo(
            "not run: it costs 13.0 ms of CPU a match on this answer (limit 2 ms);"
                + " tried again every 30 s");
    long spent = cpu.get();
    for (int i = 0; i < 100; i++) {
      costs.find(healthy, "healthy");
    }
    assertThat(cpu.get()).as("refused: not run, no CPU spent").isEqualTo(spent);
    now.addAndGet(PatternCosts.RETRY_MS);
    costPerMatch = 100_000; // the backend's body became small again
    assertThat(costs.find(healthy, "healthy").found()).as("measured anew").isTrue();
    assertThat(cpu.get()).isGreaterThan(spent);
  }

  @Test
  void aRefusedPatternsTrialIsOneProbeWhileOtherLoopsKeepRefusing() {
    costPerMatch = 13_000_000;
    // another event loop probes while the trial matches: its find comes between the trial's reads
    // of the CPU clock
    PatternCosts.Found[] during = new PatternCosts.Found[1];
    AtomicLong reads = new AtomicLong();
    PatternCosts racing =
        new PatternCosts(
            () -> {
              if (reads.incrementAndGet() == 3 && during[0] == null) {
                during[0] = PatternCostsTest.this.racingCosts.find(healthy, "healthy");
              }
              return cpu.addAndGet(costPerMatch);
            },
            now::get);
    racingCosts = racing;
    racing.find(healthy, "healthy"); // refused from now on
    now.addAndGet(PatternCosts.RETRY_MS);
    assertThat(racing.find(healthy, "healthy").found()).as("the trial ran").isTrue();
    assertThat(during[0]).isNotNull();
    assertThat(during[0].refused()).as("a probe during the trial").isTrue();
  }

  private PatternCosts racingCosts;

  @Test
  void oneCostlyMatchAmongCheapOnesDoesNotRefuse() {
    costPerMatch = 100_000;
    for (int i = 0; i < 20; i++) {
      costs.find(healthy, "healthy");
    }
    costPerMatch = 5_000_000; // once: 0.3 x 5 ms + 0.7 x 0.1 ms < 2 ms
    costs.find(healthy, "healthy");
    costPerMatch = 100_000;
    assertThat(costs.find(healthy, "healthy").refused()).isFalse();
  }

  @Test
  void realCpuTimeRefusesTheExplodingPatternAndNotASimpleOne() {
    PatternCosts real = PatternCosts.measuringThreadCpu();
    String body = "a".repeat(64 * 1024) + "!";
    Pattern exploding = Pattern.compile("(.*a){12}$");
    Pattern simple = Pattern.compile("\"status\":\\s*\"(ok|UP)\"");
    real.find(exploding, body);
    assertThat(real.find(exploding, body).refused()).as("(.*a){12}$ on 64 KiB").isTrue();
    for (int i = 0; i < 50; i++) {
      assertThat(real.find(simple, body).refused()).as("a simple pattern on 64 KiB").isFalse();
    }
  }
}
