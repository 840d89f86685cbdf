package dev.vigil.passive;

import dev.vigil.runtime.AppliedOutcomes;
import dev.vigil.runtime.OutcomeReport;
import dev.vigil.runtime.PoolKey;
import dev.vigil.security.ClientCertificates;
import dev.vigil.security.Identity;
import dev.vigil.security.Permission;
import dev.vigil.security.ReviewCache;
import io.opentelemetry.proto.collector.logs.v1.ExportLogsPartialSuccess;
import io.opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest;
import io.opentelemetry.proto.collector.logs.v1.ExportLogsServiceResponse;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One OTLP logs export, from its token to its answer (docs/passive.md, "OTLP receiver"): the
 * token's review (TokenReview for Vigil's audience), the identity's rate, a share of the bytes in
 * flight, the body, the records mapped to pools by their backend address, then per pool the
 * caller's permission ({@code create backendpools/outcomes} on that pool: SubjectAccessReview,
 * cached) and the hop to the pool's runtime. The answer counts every record that was not applied in
 * {@code partial_success.rejected_log_records} and says why in {@code error_message}. One deadline
 * covers the whole export. Runs on the call's event loop; review answers come back to it.
 */
final class OtlpExport implements ByteShares.Holder {
  private static final Logger LOG = LoggerFactory.getLogger(OtlpExport.class);

  /** No replica is known to run the pool (a single replica: it does not run here). */
  static final class NotHere extends RuntimeException {
    NotHere(PoolKey pool) {
      super("pool " + pool + " does not run on this replica", null, false, false);
    }
  }

  private final OtlpReceiver receiver;
  private final IntakeExchange.Shared shared;
  private final OtlpCall call;
  private final Context context;
  private final Map<OtlpDrop, Integer> drops = new EnumMap<>(OtlpDrop.class);
  private long timer;

  /** Once the records were handed on to their pools' routes: how far they got ({@link #timeUp}). */
  private HandedOn handedOn;

  /** The export's records, those applied so far, and those whose pool has not answered yet. */
  private record HandedOn(int records, AtomicInteger applied, AtomicInteger waiting) {}

  OtlpExport(OtlpReceiver receiver, OtlpCall call, Context context) {
    this.receiver = receiver;
    this.shared = receiver.shared();
    this.call = call;
    this.context = context;
  }

  void start() {
    timer = shared.vertx().setTimer(shared.limits().requestTimeoutMs(), id -> timeUp());
    call.onEnd(this::finish);
    String token = call.token();
    ClientCertificates.Verdict certificate = call.certificate();
    if (token == null && !certificate.verified()) {
      call.refuse(
          OtlpCall.Refusal.UNAUTHENTICATED,
          "send Authorization: Bearer <ServiceAccount token projected for Vigil's audience>"
              + certificate.refusalNote(),
          0);
      return;
    }
    OtlpProfile chosen = null;
    if (call.profile() != null) {
      chosen = receiver.records().profile(call.profile());
      if (chosen == null) {
        call.refuse(
            OtlpCall.Refusal.INVALID,
            "x-vigil-profile: no profile '"
                + call.profile()
                + "' (one of "
                + receiver.records().names()
                + ")",
            0);
        return;
      }
    }
    OtlpProfile profile = chosen;
    on(
        shared.reviews().authenticate(certificate, token, call.source()),
        who -> {
          if (who.isEmpty()) {
            call.refuse(
                OtlpCall.Refusal.UNAUTHENTICATED,
                "the token was not accepted: send a ServiceAccount token projected for Vigil's"
                    + " audience"
                    + certificate.refusalNote(),
                0);
          } else {
            admit(who.get(), profile);
          }
        });
  }

  /** An authenticated caller: its rate, a share of the bytes in flight, then the body. */
  private void admit(Identity who, OtlpProfile profile) {
    if (!shared.rates().tryAcquire(who.username())) {
      call.refuse(
          OtlpCall.Refusal.THROTTLED,
          who.username()
              + " sends more than "
              + shared.limits().requestsPerSecond()
              + " exports/s; batch more records per export",
          shared.rates().retryAfterSeconds(who.username()));
      return;
    }
    long declared = call.declaredBytes();
    long want = declared >= 0 ? declared : shared.limits().maxBodyBytes();
    if (!shared.bytesInFlight().reserve(this, call.source(), want)) {
      call.refuse(OtlpCall.Refusal.BUSY, "the intake holds its limit of request bytes", 1);
      return;
    }
    call.read(
        request -> {
          if (!call.ended()) {
            apply(who, request, profile);
          }
        });
  }

  /** Maps the records to pools, then checks the permission and applies, pool by pool. */
  private void apply(Identity who, ExportLogsServiceRequest request, OtlpProfile profile) {
    OtlpRecords.Grouped grouped = receiver.records().group(request, profile);
    grouped.drops().forEach((reason, n) -> drop(reason, n));
    List<Future<Integer>> pools = new ArrayList<>(grouped.pools().size());
    HandedOn handed =
        new HandedOn(
            grouped.records(),
            new AtomicInteger(),
            new AtomicInteger(grouped.pools().values().stream().mapToInt(List::size).sum()));
    handedOn = handed;
    for (Map.Entry<PoolKey, List<OutcomeReport>> e : grouped.pools().entrySet()) {
      int n = e.getValue().size();
      pools.add(
          forPool(who, e.getKey(), e.getValue())
              .onComplete(
                  r -> {
                    handed.applied().addAndGet(r.succeeded() ? r.result() : 0);
                    handed.waiting().addAndGet(-n);
                  }));
    }
    Future.join(pools)
        .onComplete(
            done ->
                context.runOnContext(
                    v -> {
                      if (!call.ended()) { // else answered at the deadline
                        answer(handed.records(), handed.applied().get());
                      }
                    }));
  }

  /** One pool's outcomes: the caller's permission on it, then the hop; how many were applied. */
  private Future<Integer> forPool(Identity who, PoolKey pool, List<OutcomeReport> reports) {
    return shared
        .reviews()
        .allows(who, Permission.reportOutcomes(pool.namespace(), pool.name()))
        .transform(
            allowed -> {
              if (allowed.failed() || !allowed.result()) {
                drop(allowed.failed() ? OtlpDrop.NOT_APPLIED : OtlpDrop.FORBIDDEN, reports.size());
                return Future.succeededFuture(0);
              }
              return queued(pool, reports);
            });
  }

  /** Reserves the pool's queue, delivers what fits, and counts what was not applied. */
  private Future<Integer> queued(PoolKey pool, List<OutcomeReport> reports) {
    int granted = shared.queues().reserve(pool, reports.size());
    if (granted < reports.size()) {
      drop(OtlpDrop.QUEUE_FULL, reports.size() - granted);
    }
    if (granted == 0) {
      return Future.succeededFuture(0);
    }
    List<OutcomeReport> taken = reports.subList(0, granted);
    return deliver(pool, taken)
        .transform(
            applied -> {
              shared.queues().release(pool, granted);
              if (applied.failed()) {
                drop(OtlpDrop.of(applied.cause()), granted);
                return Future.succeededFuture(0);
              }
              int unknown = applied.result().unknown().cardinality();
              if (unknown > 0) {
                drop(OtlpDrop.NOT_APPLIED, unknown);
              }
              for (AppliedOutcomes.Decided d : applied.result().decisions()) {
                shared.metrics().decided(pool, d.decision().kind());
              }
              shared.metrics().accepted(pool, granted - unknown);
              return Future.succeededFuture(granted - unknown);
            });
  }

  /**
   * Hands one pool's outcomes to its route, as the JSON intake does: its runtime here, or the
   * replica that owns it. A pool no replica is known to run fails with {@link NotHere}; its records
   * are answered as not applied and counted.
   */
  private Future<AppliedOutcomes> deliver(PoolKey pool, List<OutcomeReport> reports) {
    if (!shared.route().takes(shared.route().locate(pool))) {
      return Future.failedFuture(new NotHere(pool));
    }
    return shared.route().deliver(pool, reports);
  }

  private void answer(int records, int accepted) {
    int rejected = Math.max(0, records - Math.min(records, accepted));
    int counted = 0;
    for (int n : drops.values()) {
      counted += n;
    }
    // a record of an address in two pools is applied (or dropped) once per pool
    rejected = Math.min(rejected, counted);
    receiver.counted(records, drops);
    ExportLogsServiceResponse.Builder response = ExportLogsServiceResponse.newBuilder();
    if (rejected > 0) {
      response.setPartialSuccess(
          ExportLogsPartialSuccess.newBuilder()
              .setRejectedLogRecords(rejected)
              .setErrorMessage(message()));
    }
    call.answer(response.build());
  }

  /** What was dropped, by reason: {@code not_a_backend=3, forbidden=2}. */
  private String message() {
    StringBuilder s = new StringBuilder("records not applied: ");
    String sep = "";
    for (Map.Entry<OtlpDrop, Integer> e : drops.entrySet()) {
      s.append(sep).append(e.getKey().tag()).append('=').append(e.getValue());
      sep = ", ";
    }
    return s.append(" (docs/passive.md, OTLP receiver)").toString();
  }

  private synchronized void drop(OtlpDrop reason, int n) {
    drops.merge(reason, n, Integer::sum);
  }

  /**
   * The export's deadline. Records already handed to their pools' routes may be applied after it:
   * refused (an exporter retries {@code UNAVAILABLE} and 503), they would count twice, so the
   * export is answered as a partial success instead (exporters do not retry one), with the records
   * whose pools had not answered counted {@code unconfirmed}.
   */
  private void timeUp() {
    if (call.ended()) {
      return;
    }
    HandedOn handed = handedOn;
    if (handed == null) {
      call.refuse(
          OtlpCall.Refusal.BUSY,
          "the export did not finish within " + shared.limits().requestTimeoutMs() + " ms",
          1);
      return;
    }
    drop(OtlpDrop.UNCONFIRMED, handed.waiting().get());
    answer(handed.records(), handed.applied().get());
  }

  private void finish() {
    shared.vertx().cancelTimer(timer);
    shared.bytesInFlight().release(this);
  }

  /** Runs the handler on the call's context once the review answered; failures refuse. */
  private <T> void on(Future<T> review, Handler<T> then) {
    review.onComplete(
        r ->
            context.runOnContext(
                v -> {
                  if (call.ended()) {
                    return;
                  }
                  if (r.succeeded()) {
                    then.handle(r.result());
                  } else {
                    reviewFailed(r.cause());
                  }
                }));
  }

  private void reviewFailed(Throwable cause) {
    if (cause instanceof ReviewCache.Throttled) {
      call.refuse(
          OtlpCall.Refusal.THROTTLED,
          "too many tokens from " + call.source() + " were not accepted; retry with a valid token",
          shared.reviews().retryAfterSeconds(call.source()));
    } else if (cause instanceof ReviewCache.Saturated) {
      call.refuse(OtlpCall.Refusal.BUSY, "too many exports are waiting for a review", 1);
    } else {
      LOG.warn("OTLP receiver: review failed: {}", cause.toString());
      call.refuse(OtlpCall.Refusal.BUSY, "could not review the caller with the API server", 1);
    }
  }

  /** Another source with fewer bytes needed this export's: it is answered busy, retry. */
  @Override
  public void yielded() {
    context.runOnContext(
        v -> {
          if (!call.ended()) {
            call.refuse(
                OtlpCall.Refusal.BUSY,
                "the intake's request bytes went to a source holding fewer",
                1);
          }
        });
  }
}
