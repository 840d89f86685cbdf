package dev.vigil.passive;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The slow-body attack of issues 12 and 31, bounded for CI (by count: 10 requests): 200 TLS
 * connections from 200 other addresses, promising 4 MiB bodies and sending them slowly, never make
 * the intake hold more body bytes than its limit or more connections than its cap, and the
 * legitimate reporter's every batch is answered 2xx within 1 s meanwhile: the byte budget is shared
 * fairly between addresses ({@link ByteShares}), so a small batch takes bytes from the address that
 * holds the most. {@code bench/intake-load.sh} measures the heap and the latency at length.
 */
class SlowReportersTest {
  private static final IntakeLimits LIMITS = IntakeLimits.defaults();

  /**
   * The reporter's latency bound: 1 s, as issue 31 sets it, on a machine whose cores are not
   * oversubscribed; stretched by the load average per core when they are (the attackers' own TLS
   * clients run in this JVM too, and CI machines are shared), so the test does not depend on a
   * quiet machine. The statuses are asserted whatever the load.
   */
  private static long latencyBoundMs() {
    double load =
        java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
    double perCore = load / Runtime.getRuntime().availableProcessors();
    return (long) (1_000 * Math.max(1, perCore));
  }

  /** What the attack may add to the live heap: the byte budget, plus TLS buffers of 256 sockets. */
  private static final long HEAP_GROWTH_BOUND = LIMITS.maxBytesInFlight() + (48L << 20);

  @Test
  @Timeout(180)
  void slowAllowedSendersFromOtherAddressesNeverDelayTheReportersBatches() throws Exception {
    SlowReporters.Result r = SlowReporters.run(200, true, 10);
    System.out.println(r);
    assertThat(r.maxBytesInFlight()).isPositive().isLessThanOrEqualTo(LIMITS.maxBytesInFlight());
    assertThat(r.maxConnections()).isLessThanOrEqualTo(LIMITS.maxConnections());
    assertThat(r.legitFailures()).as("requests with no answer").isZero();
    assertThat(r.attackerConnects())
        .as("every slow sender got through TLS")
        .isGreaterThanOrEqualTo(200);
    assertThat(r.legitStatuses().keySet()).as("every batch answered 2xx").containsOnly(200);
    long bound = latencyBoundMs();
    assertThat(r.legitLatenciesMs())
        .as("latencies (bound %d ms)", bound)
        .hasSize(10)
        .allSatisfy(ms -> assertThat(ms).isLessThan(bound));
    assertThat(r.attackerStatuses())
        .as("slow senders past the byte budget are answered 503 before their body is read")
        .containsKey(503);
    assertThat(r.heapGrowthBytes()).as("live heap growth").isLessThan(HEAP_GROWTH_BOUND);
  }

  @Test
  @Timeout(180)
  void slowSendersThatMayNotReportNeverHaveTheirBodiesReadAndTheReporterGets200() throws Exception {
    SlowReporters.Result r = SlowReporters.run(200, false, 10);
    System.out.println(r);
    assertThat(r.maxBytesInFlight())
        .as("no refused sender's body is reserved or read: only the reporter's small batches")
        .isLessThan(1_024);
    assertThat(r.legitFailures()).isZero();
    assertThat(r.legitStatuses().keySet()).containsOnly(200);
    long bound = latencyBoundMs();
    assertThat(r.legitLatenciesMs())
        .as("latencies (bound %d ms)", bound)
        .hasSize(10)
        .allSatisfy(ms -> assertThat(ms).isLessThan(bound));
    assertThat(r.attackerStatuses()).containsKey(403).doesNotContainKey(200);
    assertThat(r.heapGrowthBytes()).as("live heap growth").isLessThan(HEAP_GROWTH_BOUND);
  }
}
