package dev.vigil.bench;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.net.NetServer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * HTTP backends on many addresses of one network namespace, for load runs against a real API server
 * (which refuses loopback endpoint addresses, so farm.py's 127.x layout cannot serve there). Each
 * address serves {@code 200 ok} on one port. Control: one line per TCP connection on {@code --ctl
 * HOST:PORT}, as farm.py: {@code set refuse IDXSPEC} closes those listeners, {@code set ok IDXSPEC}
 * opens them again, {@code oldest IDXSPEC} answers {@code "oldest"}: the earliest of those
 * addresses' last request times (epoch ms, 0 if one was never asked), so a load run sees when every
 * one of them has been probed since a moment; {@code ping}, {@code quit}; the answer is one JSON
 * line. Stops by itself after {@code --max-seconds}.
 *
 * <p>Run inside the test host: {@code ip netns exec vigil-h1 java -cp CP
 * dev.vigil.bench.AddressFarm --addresses FILE --port 8080 --ctl 198.18.0.11:19995}.
 */
public final class AddressFarm {
  private final Vertx vertx = Vertx.vertx();
  private final List<String> addresses;
  private final int port;
  private final HttpServer[] servers;
  private final AtomicLongArray lastRequest;

  private AddressFarm(List<String> addresses, int port) {
    this.addresses = addresses;
    this.port = port;
    this.servers = new HttpServer[addresses.size()];
    this.lastRequest = new AtomicLongArray(addresses.size());
  }

  public static void main(String[] args) throws Exception {
    Map<String, String> a = new java.util.HashMap<>();
    for (int i = 0; i + 1 < args.length; i += 2) {
      a.put(args[i].replaceFirst("^--", ""), args[i + 1]);
    }
    List<String> addresses =
        Files.readAllLines(Path.of(a.get("addresses")), StandardCharsets.UTF_8).stream()
            .map(String::trim)
            .filter(s -> !s.isEmpty())
            .toList();
    AddressFarm farm = new AddressFarm(addresses, Integer.parseInt(a.getOrDefault("port", "8080")));
    farm.open(all(addresses.size()));
    String[] ctl = a.getOrDefault("ctl", "127.0.0.1:19995").split(":");
    NetServer control =
        farm.vertx
            .createNetServer()
            .connectHandler(
                socket ->
                    socket.handler(
                        buf -> {
                          String line = buf.toString(StandardCharsets.UTF_8).trim();
                          farm.command(line)
                              .onComplete(
                                  r ->
                                      socket
                                          .write(
                                              (r.succeeded()
                                                      ? "{\"ok\":true" + r.result() + "}"
                                                      : "{\"ok\":false,\"error\":\""
                                                          + r.cause().getMessage()
                                                          + "\"}")
                                                  + "\n")
                                          .onComplete(w -> socket.close()));
                        }));
    control
        .listen(Integer.parseInt(ctl[1]), ctl[0])
        .toCompletionStage()
        .toCompletableFuture()
        .get();
    System.out.println("READY " + addresses.size());
    System.out.flush();
    Thread.sleep(TimeUnit.SECONDS.toMillis(Long.parseLong(a.getOrDefault("max-seconds", "1800"))));
    System.exit(0);
  }

  /** Runs one control line; succeeds with the answer's extra JSON fields ("" for none). */
  private Future<String> command(String line) {
    String[] w = line.split("\\s+");
    if (w[0].equals("quit")) {
      vertx.setTimer(100, id -> System.exit(0));
      return Future.succeededFuture("");
    }
    if (w[0].equals("ping")) {
      return Future.succeededFuture("");
    }
    if (w.length == 2 && w[0].equals("oldest")) {
      long oldest = Long.MAX_VALUE;
      for (int i : parse(w[1], addresses.size())) {
        oldest = Math.min(oldest, lastRequest.get(i));
      }
      return Future.succeededFuture(",\"oldest\":" + (oldest == Long.MAX_VALUE ? 0 : oldest));
    }
    if (w.length == 3 && w[0].equals("set")) {
      List<Integer> idx = parse(w[2], addresses.size());
      return switch (w[1]) {
        case "refuse" -> close(idx).map("");
        case "ok" -> open(idx).map("");
        default -> Future.failedFuture("unknown mode " + w[1]);
      };
    }
    return Future.failedFuture("unknown command");
  }

  private Future<Void> open(List<Integer> idx) {
    List<Future<?>> all = new ArrayList<>();
    for (int i : idx) {
      if (servers[i] == null) {
        int index = i;
        HttpServer s =
            vertx
                .createHttpServer()
                .requestHandler(
                    req -> {
                      lastRequest.set(index, System.currentTimeMillis());
                      req.response().putHeader("content-length", "2").end("ok");
                    });
        servers[i] = s;
        all.add(s.listen(port, addresses.get(i)));
      }
    }
    return Future.all(all).mapEmpty();
  }

  private Future<Void> close(List<Integer> idx) {
    List<Future<?>> all = new ArrayList<>();
    for (int i : idx) {
      if (servers[i] != null) {
        all.add(servers[i].close());
        servers[i] = null;
      }
    }
    return Future.all(all).mapEmpty();
  }

  private static List<Integer> all(int n) {
    List<Integer> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      out.add(i);
    }
    return out;
  }

  /** {@code 0-9,17,40-44} or {@code all}, as farm.py. */
  static List<Integer> parse(String spec, int n) {
    if (spec.equals("all")) {
      return all(n);
    }
    List<Integer> out = new ArrayList<>();
    for (String part : spec.split(",")) {
      int dash = part.indexOf('-');
      int from = Integer.parseInt(dash < 0 ? part : part.substring(0, dash));
      int to = dash < 0 ? from : Integer.parseInt(part.substring(dash + 1));
      for (int i = from; i <= to && i < n; i++) {
        out.add(i);
      }
    }
    return out;
  }
}
