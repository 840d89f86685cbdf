package dev.vigil.quorum;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigil.health.HealthSettings;
import dev.vigil.peer.PeerAuth;
import dev.vigil.peer.PeerGate;
import dev.vigil.peer.PeerReplies;
import dev.vigil.probe.ConfirmingProbe;
import dev.vigil.probe.ConfirmingProbe.Vote;
import dev.vigil.probe.ProbeTarget;
import dev.vigil.probe.Prober;
import dev.vigil.probe.VertxTimers;
import dev.vigil.reconcile.ResolvedPolicy;
import dev.vigil.reconcile.TenantFloors;
import dev.vigil.runtime.PoolKey;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.WorkerExecutor;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerRequest;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A voter's side of checker quorum (docs/design.md §8 rule 1): {@code POST /v1/confirmations} on
 * the outcome port. Only another replica of this installation may ask ({@link PeerAuth}); the body
 * is a {@link Ballot.Question}: one pool's backends its owner's verdict took Down. The voter
 * resolves the pool's check itself, probes each backend with it by {@link ConfirmingProbe} (every
 * {@code active.fastInterval}, which is the interval unless set, no jitter, until its own rise/fall
 * decides or the question's timeout passes) and answers a {@link Ballot.Answer} once every backend
 * is decided or abstained.
 *
 * <p>Bounded: a question names at most {@value #MAX_BACKENDS} backends in at most {@value
 * #MAX_BODY_BYTES} bytes, waits at most {@value #MAX_TIMEOUT_MS} ms, and at most {@value
 * #MAX_VOTING} backends are being confirmed on this replica at once (past that it abstains).
 * Whatever the voter cannot answer, it abstains on: the owner then decides with the others.
 */
public final class VoterEndpoint {
  public static final String PATH = "/v1/confirmations";
  static final int MAX_BODY_BYTES = 512 * 1024;
  static final int MAX_BACKENDS = 2_000;
  static final int MAX_VOTING = 10_000;
  static final long MAX_TIMEOUT_MS = 600_000;
  private static final Logger LOG = LoggerFactory.getLogger(VoterEndpoint.class);
  private static final Pattern LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?");
  private static final ObjectMapper JSON =
      new ObjectMapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

  private final Prober prober;
  private final PoolChecks checks;
  private final PeerAuth auth;
  private final String zone;
  private final AtomicInteger voting = new AtomicInteger();
  private final WorkerExecutor workers;

  VoterEndpoint(
      Prober prober, PoolChecks checks, PeerAuth auth, String zone, WorkerExecutor workers) {
    this.prober = prober;
    this.checks = checks;
    this.auth = auth;
    this.zone = zone;
    this.workers = workers;
  }

  /** Releases the worker pool (the confirmations in flight end with the probes' own timeouts). */
  public Future<Void> close() {
    return workers.close();
  }

  /**
   * A voter on this replica: {@code auth} says who may ask; a small worker pool of its own reads
   * the pools' policies.
   *
   * @param zone this replica's zone, as its answers name it
   */
  public static VoterEndpoint create(
      Vertx vertx,
      KubernetesClient client,
      Prober prober,
      PeerAuth auth,
      TenantFloors floors,
      String zone,
      LongSupplier clock) {
    WorkerExecutor workers = vertx.createSharedWorkerExecutor("vigil-voter", 2);
    return new VoterEndpoint(
        prober, new PoolChecks(client, floors, workers, clock), auth, zone, workers);
  }

  /** Backends being confirmed now (for tests). */
  int voting() {
    return voting.get();
  }

  /** Answers one request on its connection's context. */
  public void handle(HttpServerRequest req) {
    Context context = Vertx.currentContext();
    new PeerGate(auth, PATH, MAX_BODY_BYTES, "a question", "ask")
        .admit(req, admitted -> read(admitted, context));
  }

  private void read(HttpServerRequest req, Context context) {
    req.body()
        .onSuccess(
            body -> {
              Ballot.Question q = parse(body);
              String problem = q == null ? "the body is not a question" : problem(q);
              if (problem != null) {
                PeerReplies.refuse(req, 400, problem);
                return;
              }
              PoolKey pool = new PoolKey(q.namespace(), q.pool());
              checks
                  .resolve(pool)
                  .compose(policy -> vote(q, policy, context), e -> abstainAll(q, pool, e))
                  .onSuccess(answer -> send(req, 200, answer));
            });
    req.resume();
  }

  /** Probes every backend of the question; completes when each has voted or abstained. */
  private Future<Ballot.Answer> vote(Ballot.Question q, ResolvedPolicy policy, Context context) {
    HealthSettings s = policy.settings();
    // a backend put to the vote is in transition: the voter probes it at the policy's pace for
    // one in transition, active.fastInterval (the interval unless set)
    ConfirmingProbe.Rule rule =
        new ConfirmingProbe.Rule(
            s.fastIntervalMs(), s.rise(), s.fall(), Math.min(q.timeoutMs(), MAX_TIMEOUT_MS));
    VertxTimers timers = new VertxTimers(context);
    List<String> ids = new ArrayList<>(q.backends().size());
    List<Future<Vote>> votes = new ArrayList<>(q.backends().size());
    for (Ballot.Backend b : q.backends()) {
      ids.add(b.id());
      if (voting.incrementAndGet() > MAX_VOTING) {
        voting.decrementAndGet();
        votes.add(Future.succeededFuture(Vote.ABSTAIN));
        continue;
      }
      votes.add(
          ConfirmingProbe.vote(
                  prober, timers, new ProbeTarget(b.ip(), b.port()), policy.check(), rule)
              .andThen(done -> voting.decrementAndGet()));
    }
    return Future.join(votes)
        .transform(
            done -> {
              Map<String, Vote> byId = new LinkedHashMap<>();
              for (int i = 0; i < ids.size(); i++) {
                Future<Vote> v = votes.get(i);
                byId.put(ids.get(i), v.succeeded() ? v.result() : Vote.ABSTAIN);
              }
              return Future.succeededFuture(new Ballot.Answer(zone, byId));
            });
  }

  /** The pool's check is not known here (gone, invalid): this voter abstains on all of them. */
  private Future<Ballot.Answer> abstainAll(Ballot.Question q, PoolKey pool, Throwable cause) {
    LOG.warn("abstaining on {} backends of {}: {}", q.backends().size(), pool, cause.toString());
    Map<String, Vote> byId = new LinkedHashMap<>();
    q.backends().forEach(b -> byId.put(b.id(), Vote.ABSTAIN));
    return Future.succeededFuture(new Ballot.Answer(zone, byId));
  }

  static Ballot.Question parse(Buffer body) {
    try {
      return JSON.readValue(body.getBytes(), Ballot.Question.class);
    } catch (IOException e) {
      return null;
    }
  }

  /** What is wrong with a question, or null. */
  static String problem(Ballot.Question q) {
    if (q.namespace() == null || !LABEL.matcher(q.namespace()).matches() || q.pool() == null) {
      return "namespace and pool must be Kubernetes names";
    }
    if (q.backends().isEmpty() || q.backends().size() > MAX_BACKENDS) {
      return "backends: 1 to " + MAX_BACKENDS + " per question";
    }
    if (q.timeoutMs() < 1) {
      return "timeoutMs must be positive";
    }
    for (Ballot.Backend b : q.backends()) {
      if (b == null || b.id() == null || b.ip() == null || b.port() < 1 || b.port() > 65_535) {
        return "each backend needs an id, an ip and a port 1..65535";
      }
    }
    return null;
  }

  private static void send(HttpServerRequest req, int status, Ballot.Answer answer) {
    try {
      req.response()
          .setStatusCode(status)
          .putHeader(HttpHeaders.CONTENT_TYPE, "application/json")
          .end(Buffer.buffer(JSON.writeValueAsBytes(answer)));
    } catch (IOException e) {
      PeerReplies.refuse(req, 500, "could not write the answer");
    }
  }
}
