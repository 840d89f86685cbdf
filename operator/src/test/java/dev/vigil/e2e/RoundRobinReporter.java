package dev.vigil.e2e;

import dev.vigil.passive.IdempotencyKey;
import dev.vigil.passive.OutcomeIntake;
import dev.vigil.testing.TestTls;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * A reporter that sends a scripted failure pattern to every replica in turn, as a Service in front
 * of the replicas would spread it: one batch at a time, each to the next replica; a 503 (a replica
 * that does not own the pool answers before reading the body) or a refused connection (a stopped
 * replica) sends the same batch on to the next replica, and a full turn of refusals waits {@link
 * #PAUSE_AFTER_TURN} first. Each batch carries an {@code Idempotency-Key} of its own, the same on
 * every try of it, so a request that got no answer (the replica it reached was killed) is sent on
 * to the next replica too: if the pool's owner had applied it, it answers from memory.
 *
 * <p>With {@code resendEvery} n > 0, every n-th accepted batch is sent once more, same body and
 * key, to the next replica, as if its answer had been lost on the way (what a replica killed
 * between the owner's apply and its own answer does to the reporter): the repeat must be answered
 * 200 with every item accepted, and must not count.
 *
 * <p>The pattern: in each round, every pool in turn, and each of its backends in turn, gets one
 * batch of one success then {@code threshold} upstream 503s (a pool's batches come {@code pace}
 * apart, closer than its status interval, so a graceful stop that dropped a pending status write
 * would lose one). With {@code consecutiveErrors = threshold}, a base ejection time far shorter
 * than the gap between two batches for one backend, {@code maxEjectionPercent 100} and a sweep
 * interval longer than the test (no decay), every applied batch ejects its backend exactly once, so
 * a backend's {@code status.backends[].ejections} (the multiplier, restored by each new owner from
 * status) must equal the batches accepted for it: a lost batch leaves it one short, a batch applied
 * twice one over.
 */
final class RoundRobinReporter implements Runnable {
  static final Duration PAUSE_AFTER_TURN = Duration.ofMillis(250);
  private static final Duration GIVE_UP = Duration.ofSeconds(60);
  private static final HttpClient HTTP = TestTls.client();

  private final String namespace;
  private final List<String> pools;
  private final List<String> ips;
  private final int port;
  private final int rounds;
  private final int threshold;
  private final Duration pace;
  private final Supplier<String> token;
  private final Supplier<List<Integer>> replicas;
  private final int resendEvery;
  private final AtomicInteger resent = new AtomicInteger();
  private final Map<String, AtomicInteger> accepted = new ConcurrentHashMap<>();
  private final Map<Integer, AtomicInteger> acceptedBy = new ConcurrentHashMap<>();
  private final AtomicInteger sent = new AtomicInteger();
  private final AtomicInteger refused503 = new AtomicInteger();
  private final AtomicInteger connectionRefused = new AtomicInteger();
  private final List<String> ambiguous = new CopyOnWriteArrayList<>();
  private final List<String> unexpected = new CopyOnWriteArrayList<>();
  private volatile int batchesAccepted;
  private volatile boolean stop;
  private volatile boolean wrapUp;
  private final Object gate = new Object();
  private boolean holding; // guarded by gate
  private volatile boolean held;

  /**
   * What the reporter is doing now: the pool of its batch, the replica port of its last request and
   * whether that request is still waiting for its answer.
   */
  record Now(String pool, int poolIndex, int port, boolean inFlight) {}

  private volatile Now now = new Now("", -1, -1, false);

  /**
   * @param replicas the outcome ports of the replicas running now (read before every attempt)
   */
  RoundRobinReporter(
      String namespace,
      List<String> pools,
      List<String> ips,
      int port,
      int rounds,
      int threshold,
      Duration pace,
      Supplier<String> token,
      Supplier<List<Integer>> replicas) {
    this(namespace, pools, ips, port, rounds, threshold, pace, token, replicas, 0);
  }

  /**
   * @param resendEvery every this many accepted batches, one is sent again under its key (0: none)
   */
  RoundRobinReporter(
      String namespace,
      List<String> pools,
      List<String> ips,
      int port,
      int rounds,
      int threshold,
      Duration pace,
      Supplier<String> token,
      Supplier<List<Integer>> replicas,
      int resendEvery) {
    this.namespace = namespace;
    this.pools = pools;
    this.ips = ips;
    this.port = port;
    this.rounds = rounds;
    this.threshold = threshold;
    this.pace = pace;
    this.token = token;
    this.replicas = replicas;
    this.resendEvery = resendEvery;
  }

  static String key(String pool, String ip) {
    return pool + "/" + ip;
  }

  @Override
  public void run() {
    int next = 0;
    for (int r = 0; r < rounds && !stop && !wrapUp; r++) {
      for (int p = 0; p < pools.size() && !stop && !wrapUp; p++) {
        for (int b = 0; b < ips.size() && !stop && !wrapUp; b++) {
          awaitGate();
          next = deliver(p, ips.get(b), next);
          sleep(pace.toMillis());
        }
      }
    }
  }

  /** Sends one batch until a replica accepts it; returns the next replica index. */
  private int deliver(int poolIndex, String ip, int next) {
    String pool = pools.get(poolIndex);
    String body = batch(pool, ip);
    String key = UUID.randomUUID().toString();
    long deadline = System.nanoTime() + GIVE_UP.toNanos();
    int refusedInTurn = 0;
    while (!stop && System.nanoTime() < deadline) {
      List<Integer> ports = replicas.get();
      if (ports.isEmpty()) {
        sleep(PAUSE_AFTER_TURN.toMillis());
        continue;
      }
      int intake = ports.get(Math.floorMod(next++, ports.size()));
      sent.incrementAndGet();
      now = new Now(pool, poolIndex, intake, true);
      try {
        HttpResponse<String> res;
        try {
          res = post(intake, pool, body, key);
        } finally {
          now = new Now(pool, poolIndex, intake, false);
        }
        if (allAccepted(res)) {
          accepted.computeIfAbsent(key(pool, ip), k -> new AtomicInteger()).incrementAndGet();
          acceptedBy.computeIfAbsent(intake, k -> new AtomicInteger()).incrementAndGet();
          batchesAccepted++;
          if (resendEvery > 0 && batchesAccepted % resendEvery == 0) {
            next = resend(pool, ip, body, key, next);
          }
          return next;
        }
        if (res.statusCode() != 503) {
          unexpected.add(
              pool + " " + ip + " at :" + intake + ": " + res.statusCode() + " " + res.body());
          return next;
        }
        refused503.incrementAndGet();
      } catch (ConnectException | java.net.http.HttpConnectTimeoutException e) {
        // no connection, so nothing was sent: the next replica gets it
        connectionRefused.incrementAndGet();
      } catch (IOException e) {
        // sent, but no answer: it may or may not have been applied
        ambiguous.add(pool + " " + ip + " at :" + intake + ": " + e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return next;
      }
      if (++refusedInTurn % ports.size() == 0) {
        sleep(PAUSE_AFTER_TURN.toMillis());
      }
    }
    unexpected.add(pool + " " + ip + ": no replica accepted the batch within " + GIVE_UP);
    return next;
  }

  private boolean allAccepted(HttpResponse<String> res) {
    return res.statusCode() == 200
        && new JsonObject(res.body()).getInteger("accepted") == threshold + 1;
  }

  /**
   * Sends an accepted batch again under its key to the next replica, as after a lost answer; the
   * answer must be the first one's. Tries the following replicas while none answers (a killed one).
   */
  private int resend(String pool, String ip, String body, String key, int next) {
    for (int tries = 0; tries < 10 && !stop; tries++) {
      List<Integer> ports = replicas.get();
      if (ports.isEmpty()) {
        sleep(PAUSE_AFTER_TURN.toMillis());
        continue;
      }
      int intake = ports.get(Math.floorMod(next++, ports.size()));
      sent.incrementAndGet();
      try {
        HttpResponse<String> res = post(intake, pool, body, key);
        if (allAccepted(res)) {
          resent.incrementAndGet();
          return next;
        }
        if (res.statusCode() != 503) {
          unexpected.add(
              "resent "
                  + pool
                  + " "
                  + ip
                  + " at :"
                  + intake
                  + ": "
                  + res.statusCode()
                  + " "
                  + res.body());
          return next;
        }
        refused503.incrementAndGet();
      } catch (IOException e) {
        connectionRefused.incrementAndGet();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return next;
      }
      sleep(PAUSE_AFTER_TURN.toMillis());
    }
    unexpected.add("resent " + pool + " " + ip + ": no replica answered");
    return next;
  }

  private String batch(String pool, String ip) {
    List<String> items = new ArrayList<>();
    items.add(item(pool, ip, true, 200));
    for (int i = 0; i < threshold; i++) {
      items.add(item(pool, ip, false, 503));
    }
    return "[" + String.join(",", items) + "]";
  }

  private String item(String pool, String ip, boolean ok, int status) {
    return "{\"namespace\":\"%s\",\"pool\":\"%s\",\"backend\":\"%s:%d\",\"ok\":%s,\"status\":%d,\"origin\":\"upstream\",\"latencyMs\":3}"
        .formatted(namespace, pool, ip, port, ok, status);
  }

  private HttpResponse<String> post(int intake, String pool, String body, String key)
      throws IOException, InterruptedException {
    return HTTP.send(
        HttpRequest.newBuilder(
                URI.create("https://127.0.0.1:" + intake + OutcomeIntake.path(namespace, pool)))
            .timeout(Duration.ofSeconds(10))
            .header("Content-Type", "application/json")
            .header("Authorization", "Bearer " + token.get())
            .header(IdempotencyKey.HEADER, "\"" + key + "\"")
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  void stop() {
    stop = true;
    release();
  }

  /**
   * Makes the reporter wait before its next batch until {@link #release()}; returns at once ({@link
   * #held()} says when it waits). The batch in flight, with its resend, is delivered first.
   */
  void hold() {
    synchronized (gate) {
      holding = true;
    }
  }

  void release() {
    synchronized (gate) {
      holding = false;
      gate.notifyAll();
    }
  }

  /** Whether the reporter waits at the gate {@link #hold()} closed: nothing of it is in flight. */
  boolean held() {
    return held;
  }

  private void awaitGate() {
    synchronized (gate) {
      while (holding && !stop) {
        held = true;
        try {
          gate.wait(100);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          break;
        }
      }
      held = false;
    }
  }

  /** Sends no new batch after the one in flight (which it still delivers). */
  void wrapUp() {
    wrapUp = true;
  }

  Now now() {
    return now;
  }

  /** Accepted batches sent once more under their key (see the constructor). */
  int resent() {
    return resent.get();
  }

  /** Batches accepted (answered 200 with every item accepted) per {@link #key}. */
  int accepted(String pool, String ip) {
    AtomicInteger n = accepted.get(key(pool, ip));
    return n == null ? 0 : n.get();
  }

  /**
   * Batches accepted for every backend the reporter sends to, by {@link #key}: the ejections each
   * must have in status ({@link BatchLedger}).
   */
  Map<String, Integer> acceptedByBackend() {
    Map<String, Integer> out = new java.util.TreeMap<>();
    for (String pool : pools) {
      for (String ip : ips) {
        out.put(key(pool, ip), accepted(pool, ip));
      }
    }
    return out;
  }

  int batchesAccepted() {
    return batchesAccepted;
  }

  /** Requests sent (first tries and retries). */
  int sent() {
    return sent.get();
  }

  int refused503() {
    return refused503.get();
  }

  int connectionRefused() {
    return connectionRefused.get();
  }

  /** Requests that got no answer after they were sent. */
  List<String> ambiguous() {
    return List.copyOf(ambiguous);
  }

  /** Answers other than 200-all-accepted and 503, and batches nobody accepted. */
  List<String> unexpected() {
    return List.copyOf(unexpected);
  }

  /** Accepted batches per intake port. */
  Map<Integer, Integer> acceptedByPort() {
    Map<Integer, Integer> out = new java.util.TreeMap<>();
    acceptedBy.forEach((k, v) -> out.put(k, v.get()));
    return out;
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
