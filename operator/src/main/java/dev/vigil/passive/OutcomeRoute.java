package dev.vigil.passive;

import dev.vigil.passive.ForwardedOutcomes.PartAnswer;
import dev.vigil.peer.PeerAuth;
import dev.vigil.peer.PeerClient;
import dev.vigil.runtime.AppliedOutcomes;
import dev.vigil.runtime.OutcomeReport;
import dev.vigil.runtime.PoolKey;
import dev.vigil.runtime.PoolRuntime;
import dev.vigil.runtime.PoolRuntimes;
import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.core.AsyncResult;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.function.LongSupplier;

/**
 * Where a pool's outcomes go (docs/passive.md, "Routing between replicas"): to the pool's runtime
 * when this replica runs it, else to the replica that owns it ({@link Forwarder}), and the answer
 * comes back only once the owner applied them. Every intake (the JSON one, the OTLP one) hands a
 * pool's outcomes over through {@link #deliver}, after the reporter was authenticated and
 * authorized for the pool here.
 *
 * <p>Exactly once where it can be, at most once where it cannot: a delivery carries one id on all
 * its tries, and the owner answers a repeat from memory ({@link ForwardMemory}). A try that surely
 * applied nothing (the pool's runtime here closed, the owner answered {@code not_mine}, the
 * connection failed) is tried again, against the owner the directory names then, until the
 * deadline; then the delivery fails with {@link NotDelivered} (the reporter retries). A forward
 * whose answer did not come may have been applied: it is tried again only at the same owner; if the
 * pool moved meanwhile, or the deadline passed, the delivery fails with {@link Unconfirmed} (the
 * reporter must not retry: its outcomes may count already).
 *
 * <p>A reporter's own retry is a new delivery; when the reporter sent an {@link IdempotencyKey},
 * the owner remembers the answer under that key (here, or at the owner a forward reaches), so the
 * reporter's retry of a batch whose answer it never got is answered from memory and not applied
 * again, whichever replica the retry reached (docs/passive.md, "Sending a batch again").
 */
public final class OutcomeRoute {

  /** Nothing of the outcomes was applied: the reporter may send them again. */
  public static final class NotDelivered extends RuntimeException {
    NotDelivered(String message) {
      super(message);
    }
  }

  /**
   * The owner may or may not have applied the outcomes: sending them again may count them twice.
   */
  public static final class Unconfirmed extends RuntimeException {
    Unconfirmed(String message) {
      super(message);
    }
  }

  /**
   * The reporter's idempotency key came before with another body: nothing was applied, and the
   * reporter must send a new batch under a new key.
   */
  public static final class KeyReused extends RuntimeException {
    KeyReused(String message) {
      super(message);
    }
  }

  /** Where a pool runs, as this replica can tell. */
  public record Location(Kind kind, String address) {
    public enum Kind {
      /** Another live replica owns it, at {@code address}. */
      ELSEWHERE,
      /** It exists but no other reachable replica runs it now (moving, or its owner is gone). */
      UNKNOWN,
      /** There is no such pool. */
      NONE
    }

    public static final Location UNKNOWN = new Location(Kind.UNKNOWN, "");
    public static final Location NONE = new Location(Kind.NONE, "");

    public static Location at(String address) {
      return new Location(Kind.ELSEWHERE, address);
    }
  }

  /** Where pools run: the pools' owners and their addresses, read from caches. */
  public interface Owners {
    /** Where {@code pool} runs when not here; asked only when it does not run here. */
    Location locate(PoolKey pool);

    /** A single replica's (no leader election): it cannot tell. */
    Owners UNKNOWN = pool -> Location.UNKNOWN;
  }

  private final Vertx vertx;
  private final PoolRuntimes runtimes;
  private final Owners owners;
  private final Forwarder forwarder;
  private final RouteLimits limits;
  private final RouteMetrics metrics;
  private final LongSupplier clock;
  private final ForwardEndpoint endpoint;
  private final ForwardMemory memory;

  private OutcomeRoute(
      Vertx vertx,
      PoolRuntimes runtimes,
      Owners owners,
      Forwarder forwarder,
      ForwardEndpoint endpoint,
      ForwardMemory memory,
      RouteLimits limits,
      RouteMetrics metrics,
      LongSupplier clock) {
    this.vertx = vertx;
    this.runtimes = runtimes;
    this.owners = owners;
    this.forwarder = forwarder;
    this.endpoint = endpoint;
    this.memory = memory;
    this.limits = limits;
    this.metrics = metrics;
    this.clock = clock;
  }

  /**
   * A single replica's route (no sharding, no leader election): the pool's runtime here, or
   * nothing.
   */
  public static OutcomeRoute local(Vertx vertx, PoolRuntimes runtimes, MeterRegistry meters) {
    return local(vertx, runtimes, meters, RouteLimits.local());
  }

  /** {@link #local} with these limits (a deadline makes it wait for a pool that is starting). */
  static OutcomeRoute local(
      Vertx vertx, PoolRuntimes runtimes, MeterRegistry meters, RouteLimits limits) {
    RouteMetrics metrics = new RouteMetrics(meters, () -> 0);
    LongSupplier clock = System::currentTimeMillis;
    return new OutcomeRoute(
        vertx,
        runtimes,
        Owners.UNKNOWN,
        null,
        null,
        new ForwardMemory(limits.rememberMs(), limits.rememberCapacity(), clock),
        limits,
        metrics,
        clock);
  }

  /**
   * A route between replicas (sharded, or unsharded with leader election, where {@code owners}
   * names the leader for every pool): forwards through {@code client} to the owners {@code owners}
   * names, and takes other replicas' forwards ({@link #endpoint()}) from callers {@code auth}
   * accepts.
   *
   * @param self this replica's name (the owners remember forwarded ids per sender)
   */
  public static OutcomeRoute sharded(
      Vertx vertx,
      PoolRuntimes runtimes,
      Owners owners,
      PeerClient client,
      PeerAuth auth,
      String self,
      RouteLimits limits,
      IntakeLimits intake,
      MeterRegistry meters,
      LongSupplier clock) {
    Forwarder[] forwarder = new Forwarder[1];
    RouteMetrics metrics = new RouteMetrics(meters, () -> forwarder[0].bytesInFlight());
    forwarder[0] = new Forwarder(vertx, client, self, limits, metrics);
    ForwardMemory memory = new ForwardMemory(limits.rememberMs(), limits.rememberCapacity(), clock);
    ForwardEndpoint endpoint = new ForwardEndpoint(runtimes, auth, memory, metrics, intake);
    return new OutcomeRoute(
        vertx, runtimes, owners, forwarder[0], endpoint, memory, limits, metrics, clock);
  }

  /** The owner's endpoint for other replicas' forwards; null on a single replica. */
  public ForwardEndpoint endpoint() {
    return endpoint;
  }

  /** Where {@code pool} runs: {@code null} when here. */
  public Location locate(PoolKey pool) {
    return runtimes.contains(pool) ? null : owners.locate(pool);
  }

  /**
   * Whether a request for a pool {@link #locate} found at {@code where} is read and delivered: the
   * pool runs here, or at another replica, or (sharded) it exists and may be found within the
   * deadline (moving, or its dead owner's pools being reassigned).
   */
  public boolean takes(Location where) {
    return where == null
        || where.kind() == Location.Kind.ELSEWHERE
        || (where.kind() == Location.Kind.UNKNOWN && forwarder != null && limits.deadlineMs() > 0);
  }

  /**
   * Applies {@code reports} to {@code pool} here, or forwards them to the replica that owns it;
   * completes with what they did once applied, or fails with {@link NotDelivered} or {@link
   * Unconfirmed}.
   */
  public Future<AppliedOutcomes> deliver(PoolKey pool, List<OutcomeReport> reports) {
    return deliver(pool, reports, null);
  }

  /**
   * {@link #deliver(PoolKey, List)} under the reporter's idempotency key (null: none): outcomes the
   * pool's owner applied under the key before are not applied again, the answer is the first one's;
   * the key with another body fails with {@link KeyReused}.
   */
  public Future<AppliedOutcomes> deliver(
      PoolKey pool, List<OutcomeReport> reports, IdempotencyKey key) {
    Delivery d = new Delivery(pool, reports, key, clock.getAsLong() + limits.deadlineMs());
    d.attempt(true);
    return d.done.future();
  }

  /** One delivery's tries. */
  private final class Delivery {
    private final PoolKey pool;
    private final List<OutcomeReport> reports;
    private final IdempotencyKey key;
    private final long deadline;
    private final Promise<AppliedOutcomes> done = Promise.promise();
    private final String id = UUID.randomUUID().toString();

    /** The owner a try went to whose answer did not come (it may have applied); null if none. */
    private String unanswered;

    /** That owner's boot id before the unanswered try (null: not known). */
    private String unansweredBoot;

    Delivery(PoolKey pool, List<OutcomeReport> reports, IdempotencyKey key, long deadline) {
      this.pool = pool;
      this.reports = reports;
      this.key = key;
      this.deadline = deadline;
    }

    void attempt(boolean first) {
      if (!first) {
        metrics.retried();
      }
      Optional<PoolRuntime> runtime = runtimes.get(pool);
      if (runtime.isPresent()) {
        if (runtime.get().started()) {
          here(runtime.get());
        } else {
          again("BackendPool " + pool + " is starting here"); // its members come within moments
        }
        return;
      }
      Location where = owners.locate(pool);
      if (where.kind() != Location.Kind.ELSEWHERE || forwarder == null) {
        again("no replica runs BackendPool " + pool + " now");
        return;
      }
      if (unanswered != null && !unanswered.equals(where.address())) {
        unconfirmed("it moved from " + unanswered + ", which did not answer");
        return;
      }
      forward(where.address());
    }

    private void here(PoolRuntime runtime) {
      if (unanswered != null) {
        unconfirmed("it moved here from " + unanswered + ", which did not answer");
        return;
      }
      if (key == null) {
        runtime.onOutcomes(reports).onComplete(this::appliedHere);
        return;
      }
      String slot = ForwardMemory.key(key.slot());
      ForwardMemory.Recall recall = memory.recall(slot, key.fingerprint());
      if (recall.conflict()) {
        keyReused();
      } else if (!recall.fresh()) {
        metrics.dedupHit(true);
        recall.answer().future().onSuccess(this::remembered);
      } else {
        // the runtime knows the key too when its batch ejected a backend before the pool moved
        runtime
            .onOutcomes(reports, key.slot())
            .onComplete(
                r -> {
                  if (r.succeeded()) {
                    if (r.result().repeat()) {
                      metrics.dedupHit(true); // known from the ejection it made (EjectionKeys)
                    }
                    recall.answer().complete(PartAnswer.of(id, r.result()));
                  } else {
                    memory.forget(slot);
                    recall.answer().complete(PartAnswer.notMine(id));
                  }
                  appliedHere(r);
                });
      }
    }

    private void appliedHere(AsyncResult<AppliedOutcomes> r) {
      if (r.succeeded()) {
        done.complete(r.result());
      } else if (r.cause() instanceof PoolRuntime.Closed) {
        again("BackendPool " + pool + " is moving to another replica");
      } else {
        // the runtime failed while applying (some may count): the intake answers it per item, as
        // it did before routing
        done.fail(r.cause());
      }
    }

    /** The answer the outcomes under this key got before: applied, or nothing applied yet. */
    private void remembered(PartAnswer a) {
      if (a.applied()) {
        done.complete(a.outcomes());
      } else {
        again("the outcomes under this key were not applied at their first try");
      }
    }

    private void forward(String address) {
      String bootBefore = forwarder.boot(address);
      forwarder
          .send(address, part())
          .onComplete(
              r -> {
                if (r.succeeded()) {
                  answered(address, r.result());
                } else if (r.cause() instanceof Forwarder.Full full) {
                  fail(new NotDelivered(full.getMessage()));
                } else if (r.cause() instanceof PeerClient.NotSent
                    || r.cause() instanceof PeerClient.Refused) {
                  again("the owner at " + address + ": " + r.cause().getMessage());
                } else {
                  if (unanswered == null) {
                    unanswered = address;
                    unansweredBoot = bootBefore;
                  }
                  again("the owner at " + address + " did not answer: " + r.cause());
                }
              });
    }

    private ForwardedOutcomes.Part part() {
      return new ForwardedOutcomes.Part(
          id,
          pool.namespace(),
          pool.name(),
          reports,
          key == null ? null : key.slot(),
          key == null ? null : key.fingerprint());
    }

    private void answered(String address, Forwarder.Reply reply) {
      PartAnswer a = reply.answer();
      if (a.keyWasReused()) {
        keyReused();
        return;
      }
      if (a.applied()) {
        metrics.forwarded(reports.size());
        done.complete(a.outcomes());
        return;
      }
      if (unanswered != null) {
        // not_mine from the owner that did not answer before: its memory says it never applied
        // the part, unless it restarted since (another boot id), which lost that memory
        if (unansweredBoot == null || !unansweredBoot.equals(reply.boot())) {
          unconfirmed(address + " restarted after a try it did not answer");
          return;
        }
        unanswered = null;
        unansweredBoot = null;
      }
      again("BackendPool " + pool + " does not run at " + address + " now");
    }

    /** Tries again after a pause, while the deadline allows; else the reporter retries. */
    private void again(String why) {
      if (clock.getAsLong() + limits.retryPauseMs() > deadline) {
        if (unanswered != null) {
          unconfirmed(why);
        } else {
          fail(new NotDelivered(why));
        }
        return;
      }
      vertx.setTimer(limits.retryPauseMs(), t -> attempt(false));
    }

    private void keyReused() {
      fail(
          new KeyReused(
              IdempotencyKey.HEADER
                  + ": this key came before with another body for BackendPool "
                  + pool
                  + "; nothing was applied: send a new batch under a new key"));
    }

    private void unconfirmed(String why) {
      fail(
          new Unconfirmed(
              "the outcomes for BackendPool "
                  + pool
                  + " went to their owner, which did not confirm them ("
                  + why
                  + "); they may have been applied"));
    }

    private void fail(RuntimeException e) {
      if (e instanceof Unconfirmed) {
        metrics.unconfirmed(reports.size());
      } else if (e instanceof NotDelivered) {
        metrics.notDelivered(reports.size());
      }
      done.fail(e);
    }
  }
}
