package dev.vigil.passive;

import java.util.ArrayList;
import java.util.List;
import java.util.function.ToLongFunction;

/**
 * The slow-body proof of issue 12 as a measurement ({@link SlowReporters}): rounds of {@code
 * connections} slow senders, with attackers allowed to report (their bodies are read) and then not
 * allowed (refused before the body); prints every round and the median of the rounds. Run it with
 * the chart's heap ({@code -Xmx384m}: 75 % of the 512 Mi limit) through {@code
 * bench/intake-load.sh}.
 *
 * <p>Arguments: connections (200), the legitimate reporter's requests per round (50, one every 200
 * ms), rounds (3).
 */
public final class SlowReportersLoad {
  private SlowReportersLoad() {}

  public static void main(String[] args) throws Exception {
    int connections = args.length > 0 ? Integer.parseInt(args[0]) : 200;
    int requests = args.length > 1 ? Integer.parseInt(args[1]) : 50;
    int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 3;
    System.out.printf(
        "cores=%d heap max=%d MiB connections=%d requests=%d rounds=%d%n",
        Runtime.getRuntime().availableProcessors(),
        Runtime.getRuntime().maxMemory() >> 20,
        connections,
        requests,
        rounds);
    for (boolean authorized : new boolean[] {true, false}) {
      List<SlowReporters.Result> results = new ArrayList<>();
      for (int r = 0; r < rounds; r++) {
        SlowReporters.Result result = SlowReporters.run(connections, authorized, requests);
        System.out.println("round " + (r + 1) + ": " + result);
        results.add(result);
      }
      System.out.printf(
          "MEDIAN authorized=%s: legit latency p50=%d ms p99=%d ms max=%d ms, heap peak=%d MiB,"
              + " live after GC=%d MiB, max bytes in flight=%d%n",
          authorized,
          median(results, x -> x.latencyPercentile(0.5)),
          median(results, x -> x.latencyPercentile(0.99)),
          median(results, x -> x.latencyPercentile(1.0)),
          median(results, SlowReporters.Result::heapPeakBytes) >> 20,
          median(results, SlowReporters.Result::heapLiveAfterGcBytes) >> 20,
          median(results, SlowReporters.Result::maxBytesInFlight));
    }
  }

  private static long median(
      List<SlowReporters.Result> results, ToLongFunction<SlowReporters.Result> f) {
    return results.stream().mapToLong(f).sorted().skip(results.size() / 2).findFirst().orElse(-1);
  }
}
