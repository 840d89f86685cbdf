package dev.vigil.e2e;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * Real requests through a consumer of Vigil's slices: one {@code e2e/traffic.py} process (a new TCP
 * connection per request, paced, bounded in time), whose lines this class parses. Through
 * kube-proxy it runs inside the kube-proxy node's test host ({@code ip netns exec}) against the
 * Service's ClusterIP; through Traefik it runs in the root namespace against Traefik's entry point
 * with the Ingress's host name.
 */
final class Traffic implements AutoCloseable {
  /** One request: wall-clock start and end (ms), HTTP status or refused/reset/timeout/error. */
  record Request(long startMs, long endMs, String outcome, String backend) {
    boolean ok() {
      return "200".equals(outcome);
    }

    /** Answered by a backend that named itself (any status). */
    boolean reachedBackend() {
      return !"-".equals(backend);
    }
  }

  /** Where the requests go. */
  enum Via {
    KUBE_PROXY,
    TRAEFIK
  }

  /** Pause between request starts: about 100 requests per second per client at most. */
  static final int INTERVAL_MS = 10;

  private final Via via;
  private final Process process;
  private final Path out;
  private final Path err;
  private final Duration duration;

  private Traffic(Via via, Process process, Path out, Path err, Duration duration) {
    this.via = via;
    this.process = process;
    this.out = out;
    this.err = err;
    this.duration = duration;
  }

  /** Requests to {@code http://clusterIp:port/} from inside test host {@code host}. */
  static Traffic viaKubeProxy(
      E2eCluster cluster, int host, String clusterIp, int port, Duration duration) {
    return start(
        Via.KUBE_PROXY,
        cluster,
        duration,
        TestHosts.inHost(
            cluster, host, "e2e/traffic.py", List.of("http://" + clusterIp + ":" + port + "/")));
  }

  /** Requests to Traefik's entry point {@code url} for the Ingress host {@code hostName}. */
  static Traffic viaTraefik(E2eCluster cluster, String url, String hostName, Duration duration) {
    return start(
        Via.TRAEFIK,
        cluster,
        duration,
        List.of(
            "python3", cluster.path("e2e/traffic.py").toString(), url + "/", "--host", hostName));
  }

  private static Traffic start(Via via, E2eCluster cluster, Duration duration, List<String> cmd) {
    try {
      Path out = Files.createTempFile("vigil-traffic-" + via, ".log");
      Path err = Files.createTempFile("vigil-traffic-" + via, ".err");
      List<String> command = new ArrayList<>(cmd);
      command.addAll(
          List.of(
              "--interval-ms",
              Integer.toString(INTERVAL_MS),
              "--duration",
              Double.toString(duration.toMillis() / 1000.0),
              "--timeout",
              "1"));
      Process p =
          new ProcessBuilder(command)
              .directory(cluster.repo().toFile())
              .redirectOutput(out.toFile())
              .redirectError(err.toFile())
              .start();
      return new Traffic(via, p, out, err, duration);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  Via via() {
    return via;
  }

  /** Waits for the run to end (its own bound plus a margin) and returns every request. */
  List<Request> await() {
    try {
      if (!process.waitFor(duration.toMillis() + 30_000, TimeUnit.MILLISECONDS)) {
        process.destroyForcibly();
        throw new AssertionError(via + " traffic did not end: " + Files.readString(err));
      }
      if (process.exitValue() != 0) {
        throw new AssertionError(
            via + " traffic exited " + process.exitValue() + ": " + Files.readString(err));
      }
      return soFar();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  /** The requests logged until now (the run may go on). */
  List<Request> soFar() {
    List<Request> requests = new ArrayList<>();
    try {
      for (String line : Files.readAllLines(out)) {
        String[] f = line.trim().split(" ");
        if (f.length == 4) {
          requests.add(new Request(Long.parseLong(f[0]), Long.parseLong(f[1]), f[2], f[3]));
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return requests;
  }

  @Override
  public void close() {
    if (process.isAlive()) {
      process.destroy();
      try {
        if (!process.waitFor(5, TimeUnit.SECONDS)) {
          process.destroyForcibly();
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    try {
      Files.deleteIfExists(out);
      Files.deleteIfExists(err);
    } catch (IOException e) {
      // a temp file left behind
    }
  }

  /** Requests started in [fromMs, toMs). */
  static List<Request> between(List<Request> requests, long fromMs, long toMs) {
    return requests.stream().filter(r -> r.startMs() >= fromMs && r.startMs() < toMs).toList();
  }

  /** Requests per backend name ("-" for those no backend answered), for messages. */
  static Map<String, Long> byBackend(List<Request> requests) {
    Map<String, Long> out = new TreeMap<>();
    for (Request r : requests) {
      out.merge(r.backend() + " " + r.outcome(), 1L, Long::sum);
    }
    return out;
  }

  /**
   * The run in half-second buckets, each with its first start and the requests per backend and
   * outcome: enough to see when a backend left or joined.
   */
  static String timeline(List<Request> requests) {
    StringBuilder out = new StringBuilder();
    Map<String, Long> segment = new TreeMap<>();
    long from = -1;
    for (Request r : requests) {
      if (from < 0) {
        from = r.startMs();
      }
      segment.merge(r.backend() + " " + r.outcome(), 1L, Long::sum);
      if (r.startMs() - from >= 500) {
        out.append('\n').append(from).append(' ').append(segment);
        segment.clear();
        from = -1;
      }
    }
    if (!segment.isEmpty()) {
      out.append('\n').append(from).append(' ').append(segment);
    }
    return out.toString();
  }

  /** The share of {@code requests} that {@code which} matches, 0 for none. */
  static double share(List<Request> requests, Predicate<Request> which) {
    return requests.isEmpty()
        ? 0
        : requests.stream().filter(which).count() / (double) requests.size();
  }

  /** The nearest-rank percentile {@code p} (0..100) of {@code values}, sorted or not. */
  static long percentile(List<Long> values, double p) {
    List<Long> sorted = values.stream().sorted().toList();
    int rank = (int) Math.ceil(p / 100.0 * sorted.size());
    return sorted.get(Math.max(0, Math.min(sorted.size() - 1, rank - 1)));
  }
}
