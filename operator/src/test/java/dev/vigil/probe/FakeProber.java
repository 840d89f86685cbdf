package dev.vigil.probe;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A prober on the manual clock: healthy targets pass after {@code latencyMs}, refusing ones fail
 * after it; hanging targets time out at their deadline. Records starts, concurrency and forgotten
 * targets.
 */
final class FakeProber implements Prober {

  final ManualTimers timers;
  final Set<ProbeTarget> hanging = new HashSet<>();
  final Set<ProbeTarget> refusing = new HashSet<>();
  final Map<ProbeTarget, List<Long>> starts = new HashMap<>();
  final Map<ProbeTarget, Integer> inFlight = new HashMap<>();
  final List<ProbeTarget> forgotten = new ArrayList<>();
  long latencyMs = 5;
  long lateBy;
  int maxConcurrentPerTarget;

  FakeProber(ManualTimers timers) {
    this.timers = timers;
  }

  @Override
  public Future<ProbeResult> probe(ProbeTarget target, CheckSpec spec) {
    starts.computeIfAbsent(target, t -> new ArrayList<>()).add(timers.nowMillis());
    int concurrent = inFlight.merge(target, 1, Integer::sum);
    maxConcurrentPerTarget = Math.max(maxConcurrentPerTarget, concurrent);
    Promise<ProbeResult> promise = Promise.promise();
    long timeout = spec.timeout().toMillis();
    boolean hangs = hanging.contains(target);
    boolean refuses = refusing.contains(target);
    long delay = hangs ? timeout + lateBy : latencyMs;
    timers.schedule(
        delay,
        () -> {
          inFlight.merge(target, -1, Integer::sum);
          promise.complete(
              hangs
                  ? ProbeResult.timeout(timeout)
                  : refuses
                      ? ProbeResult.fail(Reason.CONNECTION_REFUSED, "connection refused", delay)
                      : ProbeResult.pass("status 200", delay));
        });
    return promise.future();
  }

  @Override
  public void forget(ProbeTarget target) {
    forgotten.add(target);
  }
}
