package dev.vigil.passive;

import dev.vigil.passive.ForwardedOutcomes.Part;
import dev.vigil.passive.ForwardedOutcomes.PartAnswer;
import dev.vigil.peer.PeerClient;
import dev.vigil.runtime.OutcomeReport;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A sending replica's side of routing between replicas: parts for one owner, queued on its {@link
 * Lane}, go out together, so every pool of a reporter's request (or of one turn of the event loop)
 * that one owner runs costs one forward. Bounded: the parts' bytes waiting for answers (all owners
 * together; past the bound a part is refused at once, {@link Full}), the forwards in flight to one
 * owner (more parts wait, and leave together when one comes back), the parts of one forward and the
 * time one forward waits for its answer.
 */
final class Forwarder {
  /** The bytes-in-flight bound is reached: the part was not sent. */
  static final class Full extends RuntimeException {
    Full(long max) {
      super("forwarded outcomes hold their limit of " + max + " bytes in flight");
    }
  }

  /** An owner's answer for one part, and the owner's boot id at that answer. */
  record Reply(PartAnswer answer, String boot) {}

  private record Queued(Part part, long bytes, Promise<Reply> reply) {}

  /** One owner: the parts waiting to go, the forwards in flight. */
  private final class Lane {
    private final String address;
    private final Deque<Queued> waiting = new ArrayDeque<>();
    private int inFlight;
    private boolean flushScheduled;

    Lane(String address) {
      this.address = address;
    }
  }

  private final Vertx vertx;
  private final PeerClient client;
  private final String self;
  private final RouteLimits limits;
  private final RouteMetrics metrics;
  private final Map<String, Lane> lanes = new ConcurrentHashMap<>();
  private final Map<String, String> boots = new ConcurrentHashMap<>();
  private final AtomicLong bytesInFlight = new AtomicLong();

  Forwarder(Vertx vertx, PeerClient client, String self, RouteLimits limits, RouteMetrics metrics) {
    this.vertx = vertx;
    this.client = client;
    this.self = self;
    this.limits = limits;
    this.metrics = metrics;
  }

  /** The boot id the owner at {@code address} answered with last; null before any answer. */
  String boot(String address) {
    return boots.get(address);
  }

  long bytesInFlight() {
    return bytesInFlight.get();
  }

  /** Queues {@code part} for the owner at {@code address}; completes with the owner's answer. */
  Future<Reply> send(String address, Part part) {
    long bytes = estimate(part);
    if (bytesInFlight.addAndGet(bytes) > limits.maxBytesInFlight()) {
      bytesInFlight.addAndGet(-bytes);
      return Future.failedFuture(new Full(limits.maxBytesInFlight()));
    }
    Promise<Reply> reply = Promise.promise();
    Lane lane = lanes.computeIfAbsent(address, Lane::new);
    boolean schedule;
    synchronized (lane) {
      lane.waiting.add(new Queued(part, bytes, reply));
      schedule = !lane.flushScheduled;
      lane.flushScheduled = true;
    }
    if (schedule) {
      // after the current turn of the event loop: parts queued in it for this owner go together
      Context context = vertx.getOrCreateContext();
      context.runOnContext(v -> flush(lane));
    }
    return reply.future();
  }

  /** Sends what waits on the lane, as many forwards as its bound on forwards in flight allows. */
  private void flush(Lane lane) {
    while (true) {
      List<Queued> batch = new ArrayList<>();
      synchronized (lane) {
        lane.flushScheduled = false;
        if (lane.inFlight >= limits.maxBatchesPerPeer() || lane.waiting.isEmpty()) {
          return;
        }
        while (!lane.waiting.isEmpty() && batch.size() < limits.maxPartsPerBatch()) {
          batch.add(lane.waiting.poll());
        }
        lane.inFlight++;
      }
      forward(lane, batch);
    }
  }

  private void forward(Lane lane, List<Queued> batch) {
    metrics.forward();
    List<Part> parts = batch.stream().map(Queued::part).toList();
    client
        .post(
            lane.address,
            ForwardEndpoint.PATH,
            new ForwardedOutcomes.Request(self, parts),
            ForwardedOutcomes.Answer.class,
            limits.forwardTimeoutMs())
        .onComplete(
            answered -> {
              synchronized (lane) {
                lane.inFlight--;
                if (lane.inFlight == 0 && lane.waiting.isEmpty() && !lane.flushScheduled) {
                  // an idle owner's lane goes (replicas come and go under new addresses); a part
                  // queued on it meanwhile still leaves with its own scheduled flush
                  lanes.remove(lane.address, lane);
                }
              }
              for (Queued q : batch) {
                bytesInFlight.addAndGet(-q.bytes());
              }
              if (answered.succeeded()) {
                deliver(lane.address, batch, answered.result());
              } else {
                batch.forEach(q -> q.reply().tryFail(answered.cause()));
              }
              flush(lane);
            });
  }

  private void deliver(String address, List<Queued> batch, ForwardedOutcomes.Answer answer) {
    if (answer.boot() != null) {
      boots.put(address, answer.boot());
    }
    Map<String, PartAnswer> byId = new HashMap<>();
    answer.parts().forEach(a -> byId.put(a.id(), a));
    for (Queued q : batch) {
      PartAnswer a = byId.get(q.part().id());
      if (a == null) {
        q.reply().tryFail(new IllegalStateException("the owner's answer left a part out"));
      } else {
        q.reply().tryComplete(new Reply(a, answer.boot()));
      }
    }
  }

  /** About the bytes of a part as JSON: what the bound on bytes in flight counts. */
  static long estimate(Part part) {
    long bytes = 128 + part.namespace().length() + part.name().length();
    for (OutcomeReport o : part.outcomes()) {
      bytes += 64 + o.ip().length();
    }
    return bytes;
  }
}
