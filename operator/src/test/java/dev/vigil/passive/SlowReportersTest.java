package dev.vigil.passive;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The slow-body attack of issue 12, bounded for CI (by count: 10 requests; no timing target): 200
 * TLS connections promising 4 MiB bodies and sending them slowly never make the intake hold more
 * body bytes than its limit or more connections than its cap, and a legitimate reporter is answered
 * every time meanwhile (by the pool: 200; or, while allowed attackers hold the byte budget, 503
 * with Retry-After, at once). {@code bench/intake-load.sh} measures the heap and the latency.
 */
class SlowReportersTest {
  private static final IntakeLimits LIMITS = IntakeLimits.defaults();

  @Test
  @Timeout(180)
  void slowAllowedSendersStayWithinTheByteBudgetAndTheReporterIsAnswered() throws Exception {
    SlowReporters.Result r = SlowReporters.run(200, true, 10);
    System.out.println(r);
    assertThat(r.maxBytesInFlight()).isPositive().isLessThanOrEqualTo(LIMITS.maxBytesInFlight());
    assertThat(r.maxConnections()).isLessThanOrEqualTo(LIMITS.maxConnections() + 1);
    assertThat(r.legitFailures()).as("requests with no answer").isZero();
    assertThat(r.attackerConnects())
        .as("every slow sender got through TLS")
        .isGreaterThanOrEqualTo(200);
    assertThat(r.legitStatuses().keySet()).isSubsetOf(200, 429, 503).isNotEmpty();
    assertThat(r.attackerStatuses())
        .as("slow senders past the byte budget are answered 503 before their body is read")
        .containsKey(503);
  }

  @Test
  @Timeout(180)
  void slowSendersThatMayNotReportNeverHaveTheirBodiesReadAndTheReporterGets200() throws Exception {
    SlowReporters.Result r = SlowReporters.run(200, false, 10);
    System.out.println(r);
    assertThat(r.maxBytesInFlight()).as("no refused sender's body is reserved or read").isZero();
    assertThat(r.legitFailures()).isZero();
    assertThat(r.legitStatuses()).containsKey(200);
    assertThat(r.attackerStatuses()).containsKey(403).doesNotContainKey(200);
  }
}
