package dev.vigil.passive;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.health.HealthSettings;
import dev.vigil.health.Origin;
import dev.vigil.peer.PeerAuth;
import dev.vigil.peer.PeerClient;
import dev.vigil.runtime.AppliedOutcomes;
import dev.vigil.runtime.OutcomeReport;
import dev.vigil.runtime.PoolKey;
import dev.vigil.runtime.PoolRuntimes;
import dev.vigil.runtime.TransitionSink;
import dev.vigil.security.Reviews;
import dev.vigil.security.TokenBuckets;
import dev.vigil.testing.TestTls;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.WorkerExecutor;
import io.vertx.core.http.HttpServerRequest;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A pool's outcomes delivered through {@link OutcomeRoute} to an owner on a real loopback TLS port
 * ({@link ForwardEndpoint} behind an {@link OutcomeIntake}), counted where they land: the owner's
 * runtime. A forward whose answer is lost is tried again at the same owner and applied once; a pool
 * that arrives at its owner late is found within the deadline; a pool that moved while an answer
 * was lost is reported unconfirmed, never applied at a second owner.
 */
class OutcomeRouteTest {
  private static final PoolKey WEB = new PoolKey("shop", "web");
  private static final String OWN = "vigil-sa-token";

  private final Vertx vertx = Vertx.vertx();
  private final WorkerExecutor workers = vertx.createSharedWorkerExecutor("route-test", 2);
  private final List<IntakeHarness> owners = new ArrayList<>();
  private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  private final AtomicReference<OutcomeRoute.Location> location =
      new AtomicReference<>(OutcomeRoute.Location.UNKNOWN);

  @AfterEach
  void close() throws Exception {
    for (IntakeHarness h : owners) {
      h.close();
    }
    vertx.close().await(10, TimeUnit.SECONDS);
  }

  /**
   * An owner: its runtimes and its forward endpoint on its intake's port; {@code front} sees each
   * forward first and passes it on (or not).
   */
  private IntakeHarness owner(Front front) {
    IntakeHarness h =
        new IntakeHarness(
            vertx, new SimpleMeterRegistry(), IntakeLimits.defaults(), System::currentTimeMillis);
    h.reviewer.user(OWN, "system:serviceaccount:vigil-system:vigil");
    OutcomeRoute side = route(h.runtimes, 5_000, h.reviewer, "owner");
    ForwardEndpoint endpoint = side.endpoint();
    h.intake.serve(ForwardEndpoint.PATH, req -> front.handle(req, endpoint));
    owners.add(h);
    return h;
  }

  /** How an owner's port treats a forward before its endpoint does. */
  private interface Front {
    void handle(HttpServerRequest req, ForwardEndpoint endpoint);

    Front PASS = (req, endpoint) -> endpoint.handle(req);
  }

  /**
   * The owner applies the first forward, then closes the connection without an answer (it was
   * applied, its answer lost); later forwards pass. {@code afterFirst} runs once it applied.
   */
  private static Front losesFirstAnswer(Runnable afterFirst) {
    AtomicInteger seen = new AtomicInteger();
    return (req, endpoint) -> {
      if (seen.getAndIncrement() > 0) {
        endpoint.handle(req);
        return;
      }
      req.body()
          .onSuccess(
              body ->
                  endpoint
                      .take(ForwardEndpoint.parse(body))
                      .onComplete(
                          applied -> {
                            afterFirst.run();
                            req.connection().close();
                          }));
      req.resume();
    };
  }

  private OutcomeRoute route(
      PoolRuntimes runtimes, long deadlineMs, FakeReviewer reviewer, String self) {
    Reviews reviews =
        new Reviews(
            reviewer,
            workers,
            IntakeLimits.defaults().reviewPolicy(),
            new TokenBuckets(100, 100, 100, System::currentTimeMillis),
            System::currentTimeMillis);
    byte[] cert;
    try {
      cert = Files.readAllBytes(TestTls.certFile());
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    return OutcomeRoute.sharded(
        vertx,
        runtimes,
        pool -> location.get(),
        new PeerClient(vertx, () -> OWN, () -> cert),
        new PeerAuth(reviews, () -> OWN),
        self,
        RouteLimits.defaults().withDeadlineMs(deadlineMs),
        IntakeLimits.defaults(),
        meters,
        System::currentTimeMillis);
  }

  /** The sending replica: runs no pool itself. */
  private OutcomeRoute sender(long deadlineMs) {
    return sender(deadlineMs, "sender");
  }

  private OutcomeRoute sender(long deadlineMs, String self) {
    PoolRuntimes none =
        new PoolRuntimes(
            vertx,
            (context, callback) -> IntakeHarness.NO_PROBES,
            TransitionSink.NONE,
            System::currentTimeMillis);
    FakeReviewer reviewer = new FakeReviewer();
    return route(none, deadlineMs, reviewer, self);
  }

  private static List<OutcomeReport> failures(int n) {
    List<OutcomeReport> reports = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      reports.add(new OutcomeReport(IntakeHarness.ip(i % 3), false, Origin.UPSTREAM, 3));
    }
    reports.add(new OutcomeReport("10.9.9.9", true, Origin.UPSTREAM, 3));
    return reports;
  }

  private static String at(IntakeHarness h) {
    return "127.0.0.1:" + h.port;
  }

  private static <T> T await(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(20, TimeUnit.SECONDS);
  }

  private static Throwable failure(Future<?> f) {
    try {
      f.toCompletionStage().toCompletableFuture().get(20, TimeUnit.SECONDS);
      return null;
    } catch (java.util.concurrent.ExecutionException e) {
      return e.getCause();
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  private double counter(String name) {
    var c = meters.find(name).counter();
    return c == null ? 0 : c.count();
  }

  @Test
  void appliesAtTheOwnerAndAnswersWithWhatItDid() throws Exception {
    IntakeHarness owner = owner(Front.PASS);
    owner.pool(WEB, 3, HealthSettings.defaults());
    location.set(OutcomeRoute.Location.at(at(owner)));
    AppliedOutcomes applied = await(sender(5_000).deliver(WEB, failures(4)));
    assertThat(applied.unknown().stream().boxed().toList()).containsExactly(4);
    assertThat(owner.runtimes.outcomesApplied()).isEqualTo(4);
    assertThat(counter("vigil_outcomes_forwarded_total")).isEqualTo(5);
  }

  @Test
  void aForwardWhoseAnswerWasLostIsAppliedOnceWhenTriedAgain() throws Exception {
    IntakeHarness owner = owner(losesFirstAnswer(() -> {}));
    owner.pool(WEB, 3, HealthSettings.defaults());
    location.set(OutcomeRoute.Location.at(at(owner)));
    AppliedOutcomes applied = await(sender(5_000).deliver(WEB, failures(4)));
    assertThat(applied.unknown().cardinality()).isEqualTo(1);
    assertThat(owner.runtimes.outcomesApplied()).as("applied at the owner").isEqualTo(4);
    assertThat(counter("vigil_outcome_forward_dedup_hits_total")).isEqualTo(1);
    assertThat(counter("vigil_outcome_forward_retries_total")).isEqualTo(1);
  }

  @Test
  void aPoolThatArrivesAtItsOwnerLateIsFoundWithinTheDeadline() throws Exception {
    IntakeHarness owner = owner(Front.PASS);
    location.set(OutcomeRoute.Location.at(at(owner)));
    Future<AppliedOutcomes> delivering = sender(5_000).deliver(WEB, failures(2));
    Thread.sleep(400);
    owner.pool(WEB, 3, HealthSettings.defaults());
    await(delivering);
    assertThat(owner.runtimes.outcomesApplied()).isEqualTo(2);
    assertThat(counter("vigil_outcome_forward_retries_total")).isPositive();
  }

  /**
   * The reconciler registers a pool's runtime a moment before it hands it its members and what the
   * previous owner left in status (a new leader, a pool moving in): a batch in that moment waits
   * for them. Applied at once, every outcome was answered {@code unknown_backend} (a reporter's
   * 422, not retried: StandbyForwardE2E's new leader did this at its first batch).
   */
  @Test
  void aBatchForARuntimeWithoutItsMembersYetWaitsForThemHere() throws Exception {
    IntakeHarness owner = owner(Front.PASS);
    owner.runtimes.ensure(WEB, HealthSettings.defaults()); // registered, no update yet
    Future<AppliedOutcomes> delivering =
        route(owner.runtimes, 5_000, owner.reviewer, "owner").deliver(WEB, failures(4));
    awaitRetry();
    owner.pool(WEB, 3, HealthSettings.defaults()); // its first update: the members
    AppliedOutcomes applied = await(delivering);
    assertThat(applied.unknown().stream().boxed().toList()).containsExactly(4);
    assertThat(owner.runtimes.outcomesApplied()).isEqualTo(4);
  }

  @Test
  void aForwardToAnOwnerWhoseRuntimeHasNoMembersYetIsTriedAgainUntilItHas() throws Exception {
    IntakeHarness owner = owner(Front.PASS);
    owner.runtimes.ensure(WEB, HealthSettings.defaults());
    location.set(OutcomeRoute.Location.at(at(owner)));
    Future<AppliedOutcomes> delivering = sender(5_000).deliver(WEB, failures(4));
    awaitRetry(); // the owner answered not_mine
    owner.pool(WEB, 3, HealthSettings.defaults());
    AppliedOutcomes applied = await(delivering);
    assertThat(applied.unknown().stream().boxed().toList()).containsExactly(4);
    assertThat(owner.runtimes.outcomesApplied()).isEqualTo(4);
  }

  /** Waits until a route tried a batch again (applied at once, it never does). */
  private void awaitRetry() {
    org.awaitility.Awaitility.await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> counter("vigil_outcome_forward_retries_total") > 0);
  }

  @Test
  void aBatchNoOwnerTakesWithinTheDeadlineIsNotDeliveredAndNotApplied() throws Exception {
    IntakeHarness owner = owner(Front.PASS);
    location.set(OutcomeRoute.Location.at(at(owner)));
    long start = System.nanoTime();
    Throwable failed = failure(sender(600).deliver(WEB, failures(2)));
    assertThat(failed).isInstanceOf(OutcomeRoute.NotDelivered.class);
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
    assertThat(owner.runtimes.outcomesApplied()).isZero();
    assertThat(counter("vigil_outcome_forward_failed_total")).isEqualTo(3);
  }

  @Test
  void aPoolThatMovedWhileAnAnswerWasLostIsUnconfirmedNotAppliedTwice() throws Exception {
    IntakeHarness next = owner(Front.PASS);
    next.pool(WEB, 3, HealthSettings.defaults());
    Consumer<Void> move = v -> location.set(OutcomeRoute.Location.at(at(next)));
    IntakeHarness first = owner(losesFirstAnswer(() -> move.accept(null)));
    first.pool(WEB, 3, HealthSettings.defaults());
    location.set(OutcomeRoute.Location.at(at(first)));
    Throwable failed = failure(sender(5_000).deliver(WEB, failures(2)));
    assertThat(failed).isInstanceOf(OutcomeRoute.Unconfirmed.class);
    assertThat(first.runtimes.outcomesApplied()).isEqualTo(2);
    assertThat(next.runtimes.outcomesApplied()).as("applied again at the next owner").isZero();
  }

  @Test
  void aReportersRetryUnderItsKeyThroughAnotherReplicaIsAnsweredFromTheOwnersMemory()
      throws Exception {
    IntakeHarness owner = owner(Front.PASS);
    owner.pool(WEB, 3, HealthSettings.defaults());
    location.set(OutcomeRoute.Location.at(at(owner)));
    IdempotencyKey key = IdempotencyKey.of("k-1", "proxy", WEB, new byte[] {1});
    AppliedOutcomes first = await(sender(5_000, "replica-b").deliver(WEB, failures(4), key));
    AppliedOutcomes again = await(sender(5_000, "replica-c").deliver(WEB, failures(4), key));
    assertThat(owner.runtimes.outcomesApplied()).as("applied at the owner").isEqualTo(4);
    assertThat(again.unknown()).isEqualTo(first.unknown());
    Throwable reused =
        failure(
            sender(5_000, "replica-c")
                .deliver(WEB, failures(4), IdempotencyKey.of("k-1", "proxy", WEB, new byte[] {2})));
    assertThat(reused).isInstanceOf(OutcomeRoute.KeyReused.class);
    assertThat(owner.runtimes.outcomesApplied()).isEqualTo(4);
  }
}
