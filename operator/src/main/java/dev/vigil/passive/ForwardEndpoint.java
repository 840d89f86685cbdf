package dev.vigil.passive;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigil.passive.ForwardedOutcomes.Part;
import dev.vigil.passive.ForwardedOutcomes.PartAnswer;
import dev.vigil.peer.PeerAuth;
import dev.vigil.peer.PeerGate;
import dev.vigil.peer.PeerReplies;
import dev.vigil.runtime.OutcomeReport;
import dev.vigil.runtime.PoolRuntime;
import dev.vigil.runtime.PoolRuntimes;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerRequest;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An owner's side of routing between replicas (docs/passive.md, "Routing between replicas"): {@code
 * POST /v1/forwarded-outcomes} on the outcome port. Only another replica of this installation may
 * call it ({@link PeerAuth}): the replica that took the outcomes from a reporter already
 * authenticated the reporter and checked its permission on each pool, so the owner applies them as
 * its own intake would. Each part is applied at most once: its id is remembered with its answer
 * ({@link ForwardMemory}) before the pool's runtime is asked, and a repeat gets that answer. A part
 * whose pool does not run here is answered {@code not_mine} and nothing of it is applied. A part
 * carrying a reporter's idempotency key is remembered under that key, so the reporter's retry of a
 * batch whose answer it never got (the replica it reached was killed) is answered from memory too,
 * whichever replica forwards it.
 */
public final class ForwardEndpoint {
  public static final String PATH = "/v1/forwarded-outcomes";
  private static final Logger LOG = LoggerFactory.getLogger(ForwardEndpoint.class);
  private static final ObjectMapper JSON =
      new ObjectMapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

  private final PoolRuntimes runtimes;
  private final PeerAuth auth;
  private final ForwardMemory memory;
  private final RouteMetrics metrics;
  private final IntakeLimits limits;
  private final String boot = UUID.randomUUID().toString();

  /**
   * @param memory the owner's memory of what it applied, shared with its own route (a reporter's
   *     repeat under the same idempotency key may reach the owner directly or through a replica)
   */
  ForwardEndpoint(
      PoolRuntimes runtimes,
      PeerAuth auth,
      ForwardMemory memory,
      RouteMetrics metrics,
      IntakeLimits limits) {
    this.runtimes = runtimes;
    this.auth = auth;
    this.memory = memory;
    this.metrics = metrics;
    this.limits = limits;
  }

  /** The most bytes of one forward: a reporter's largest body, twice (JSON of the parsed items). */
  long maxBodyBytes() {
    return 2L * limits.maxBodyBytes() + 64 * 1024;
  }

  /** Answers one request on its connection's context. */
  public void handle(HttpServerRequest req) {
    new PeerGate(auth, PATH, maxBodyBytes(), "a forward", "forward").admit(req, this::read);
  }

  private void read(HttpServerRequest req) {
    req.body()
        .onSuccess(
            body -> {
              ForwardedOutcomes.Request r = parse(body);
              String problem = r == null ? "the body is not a forward" : problem(r);
              if (problem != null) {
                PeerReplies.refuse(req, 400, problem);
                return;
              }
              take(r).onSuccess(answer -> send(req, answer));
            });
    req.resume();
  }

  /** Applies each part at most once; completes with every part's answer, in order. */
  Future<ForwardedOutcomes.Answer> take(ForwardedOutcomes.Request r) {
    List<Future<PartAnswer>> answers = new ArrayList<>(r.parts().size());
    for (Part part : r.parts()) {
      answers.add(take(r.from(), part));
    }
    return Future.join(answers)
        .transform(
            done -> {
              List<PartAnswer> parts = new ArrayList<>(answers.size());
              for (int i = 0; i < answers.size(); i++) {
                Future<PartAnswer> a = answers.get(i);
                parts.add(a.succeeded() ? a.result() : PartAnswer.notMine(r.parts().get(i).id()));
              }
              return Future.succeededFuture(new ForwardedOutcomes.Answer(boot, parts));
            });
  }

  private Future<PartAnswer> take(String from, Part part) {
    String slot = ForwardMemory.slot(from, part);
    ForwardMemory.Recall recall = memory.recall(slot, part.fingerprint());
    if (recall.conflict()) {
      return Future.succeededFuture(PartAnswer.keyReused(part.id()));
    }
    if (!recall.fresh()) {
      metrics.dedupHit(part.key() != null);
      // a repeat under a reporter's key may come from another replica, with an id of its own
      return recall.answer().future().map(a -> a.withId(part.id()));
    }
    Optional<PoolRuntime> runtime = runtimes.started(part.pool());
    if (runtime.isEmpty()) {
      return notApplied(slot, part, recall); // not here, or without its members yet
    }
    runtime
        .get()
        .onOutcomes(part.outcomes(), part.key())
        .onComplete(
            applied -> {
              if (applied.succeeded()) {
                if (applied.result().repeat()) {
                  metrics.dedupHit(true); // known from the ejection it made (EjectionKeys)
                } else {
                  metrics.received(part.outcomes().size());
                }
                recall.answer().complete(PartAnswer.of(part.id(), applied.result()));
              } else {
                if (!(applied.cause() instanceof PoolRuntime.Closed)) {
                  LOG.warn("forwarded outcomes for {} failed: {}", part.pool(), applied.cause());
                }
                notApplied(slot, part, recall);
              }
            });
    return recall.answer().future();
  }

  /** Nothing of the part was applied here: forgotten, so a later try may apply it. */
  private Future<PartAnswer> notApplied(String slot, Part part, ForwardMemory.Recall recall) {
    memory.forget(slot);
    recall.answer().complete(PartAnswer.notMine(part.id()));
    return recall.answer().future();
  }

  static ForwardedOutcomes.Request parse(Buffer body) {
    try {
      return JSON.readValue(body.getBytes(), ForwardedOutcomes.Request.class);
    } catch (IOException e) {
      return null;
    }
  }

  /** What is wrong with a forward, or null. */
  String problem(ForwardedOutcomes.Request r) {
    if (r.from() == null || r.from().isEmpty()) {
      return "from: the sending replica's name is required";
    }
    if (r.parts().isEmpty() || r.parts().size() > limits.maxPoolsPerBatch() * 64) {
      return "parts: 1 to " + limits.maxPoolsPerBatch() * 64 + " per forward";
    }
    Set<String> ids = new HashSet<>();
    for (Part p : r.parts()) {
      if (p == null || p.id() == null || !ids.add(p.id())) {
        return "each part needs an id of its own";
      }
      if (p.namespace() == null
          || p.name() == null
          || OutcomeIntake.route(OutcomeIntake.path(p.namespace(), p.name())) == null) {
        return "part " + p.id() + ": namespace and name must be Kubernetes names";
      }
      if (p.outcomes().size() > limits.maxItems()) {
        return "part " + p.id() + ": at most " + limits.maxItems() + " outcomes";
      }
      for (OutcomeReport o : p.outcomes()) {
        if (o == null || o.ip() == null || o.origin() == null) {
          return "part " + p.id() + ": each outcome needs an ip and an origin";
        }
      }
    }
    return null;
  }

  private static void send(HttpServerRequest req, ForwardedOutcomes.Answer answer) {
    try {
      req.response()
          .setStatusCode(200)
          .putHeader(HttpHeaders.CONTENT_TYPE, "application/json")
          .end(Buffer.buffer(JSON.writeValueAsBytes(answer)));
    } catch (IOException e) {
      PeerReplies.refuse(req, 500, "could not write the answer");
    }
  }
}
