package dev.vigil.ops;

import io.javaoperatorsdk.operator.Operator;
import io.javaoperatorsdk.operator.RuntimeInfo;
import java.util.function.BooleanSupplier;

/**
 * The operator's readiness (docs/design.md §6, §7: ready when the informers have synced and this
 * replica leads, runs its own pools (sharded) or stands by healthily). Inputs are suppliers so it
 * can be tested without an operator.
 */
public final class Readiness {
  /** A verdict and a one-line reason, served as the body of {@code /readyz}. */
  public record Verdict(boolean ready, String detail) {}

  private final BooleanSupplier started;
  private final BooleanSupplier informersHealthy;
  private final Leadership leadership;

  /**
   * @param started the operator finished starting (JOSDK {@code RuntimeInfo.isStarted()})
   * @param informersHealthy every event source is healthy, i.e. informers synced and watching
   *     (JOSDK {@code RuntimeInfo.allEventSourcesAreHealthy()}); asked only of an active replica
   */
  public Readiness(
      BooleanSupplier started, BooleanSupplier informersHealthy, Leadership leadership) {
    this.started = started;
    this.informersHealthy = informersHealthy;
    this.leadership = leadership;
  }

  /**
   * The operator's readiness from JOSDK's runtime info, taken once: call it after every controller
   * is registered and before {@code Operator.start()}. Each {@code getRuntimeInfo()} reads the
   * registered controllers under the lock that {@code start()} holds until every informer has
   * synced, so asking it per request held {@code /readyz}, and the event loop serving it, for
   * seconds at each start.
   */
  public static Readiness of(Operator operator, Leadership leadership) {
    RuntimeInfo runtime = operator.getRuntimeInfo();
    return new Readiness(runtime::isStarted, runtime::allEventSourcesAreHealthy, leadership);
  }

  public Verdict check() {
    if (leadership.isFenced()) {
      return new Verdict(false, "shard Lease lost: not probing or writing until restarted");
    }
    if (!started.getAsBoolean()) {
      return new Verdict(false, "operator starting");
    }
    return switch (leadership.role()) {
      case WAITING -> new Verdict(false, "leader election: no leader seen yet");
      case LOST -> new Verdict(false, "leader election: lost the lease");
      case STANDBY -> new Verdict(true, "standing by; leader is " + leadership.leader());
      case SOLE, LEADING -> {
        boolean healthy;
        try {
          healthy = informersHealthy.getAsBoolean();
        } catch (RuntimeException e) {
          yield new Verdict(false, "informers: " + e.getMessage());
        }
        String role = leadership.role() == Leadership.Role.LEADING ? "leading" : "running";
        yield healthy
            ? new Verdict(true, role + "; informers synced")
            : new Verdict(false, role + "; informers not synced or not watching");
      }
    };
  }
}
