package dev.vigil.inspect;

import dev.vigil.api.Conditions;
import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.api.v1alpha1.BackendState;
import dev.vigil.api.v1alpha1.BackendStatus;
import dev.vigil.api.v1alpha1.HealthPolicy;
import dev.vigil.api.v1alpha1.LastProbe;
import dev.vigil.reconcile.Durations;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.Optional;

/**
 * The text of {@code kubectl vigil why POD}: for every pool that selects the Pod, its verdict on
 * the Pod (state, reason, last probe, the voters' answers on its last Down, ejection, damping),
 * whether the checker deciding the pool is Suspect, what the pool's EndpointSlices say about it,
 * whether the pool is in panic, whether the Pod gets traffic and what would change that. Pure: the
 * objects and the time in, text out.
 */
public final class WhyReport {
  /** What one pool that selects the Pod has to say: its policy may be missing (null). */
  public record PoolFacts(BackendPool pool, HealthPolicy policy, List<EndpointSlice> slices) {}

  private WhyReport() {}

  public static String render(Pod pod, List<PoolFacts> pools, Instant now) {
    StringBuilder out = new StringBuilder();
    String ns = pod.getMetadata().getNamespace();
    String ip = pod.getStatus() == null ? null : pod.getStatus().getPodIP();
    out.append("Pod ")
        .append(ns)
        .append('/')
        .append(pod.getMetadata().getName())
        .append("  IP ")
        .append(ip == null ? "none yet" : ip)
        .append("  kubelet Ready: ")
        .append(podReady(pod))
        .append(pod.getMetadata().getDeletionTimestamp() == null ? "" : "  (terminating)")
        .append('\n');
    if (pools.isEmpty()) {
      out.append("\nNo BackendPool in namespace ")
          .append(ns)
          .append(" selects this Pod: Vigil does not decide its traffic.\n");
      return out.toString();
    }
    for (PoolFacts facts : pools) {
      out.append('\n');
      pool(out, pod, facts, now);
    }
    return out.toString();
  }

  /**
   * A backend that is not a Pod ({@code spec.targets}): {@code id} is its name in status (an
   * address, or {@code hostname/address}); the rest reads as for a Pod, matched by address.
   */
  public static String renderTarget(
      String namespace, String id, String ip, PoolFacts facts, Instant now) {
    StringBuilder out = new StringBuilder();
    out.append("Target ").append(namespace).append('/').append(id);
    out.append("  IP ").append(ip).append("  (spec.targets: no Pod, no kubelet)\n\n");
    Pod stand = new Pod();
    stand.setMetadata(new io.fabric8.kubernetes.api.model.ObjectMeta());
    stand.getMetadata().setNamespace(namespace);
    stand.getMetadata().setName(id);
    stand.setStatus(new io.fabric8.kubernetes.api.model.PodStatus());
    stand.getStatus().setPodIP(ip);
    pool(out, stand, facts, now);
    condition(
            facts.pool().getStatus() == null ? null : facts.pool().getStatus().getConditions(),
            Conditions.TARGETS_RESOLVED)
        .filter(c -> !Conditions.TRUE.equals(c.getStatus()))
        .ifPresent(c -> line(out, "dns", c.getReason() + ": " + c.getMessage()));
    return out.toString();
  }

  private static void pool(StringBuilder out, Pod pod, PoolFacts facts, Instant now) {
    BackendPool pool = facts.pool();
    var status = pool.getStatus();
    Settings settings = Settings.of(facts.policy());
    out.append("BackendPool ").append(pool.getMetadata().getName());
    out.append("  (policy ").append(pool.getSpec().getPolicyRef().getName());
    out.append(facts.policy() == null ? ": not found" : ", " + settings.describe()).append(")\n");
    if (facts.policy() == null) {
      missingPolicy(out, pod, facts);
      return;
    }
    if (status == null) {
      line(out, "pool", "no status yet: is Vigil running?");
      return;
    }
    boolean panic = Boolean.TRUE.equals(status.getPanic());
    line(
        out,
        "pool",
        status.getAvailability()
            + " available, panic: "
            + (panic ? "YES (every decided backend is published)" : "no")
            + settings.panicNote());
    condition(status.getConditions(), Conditions.READY)
        .filter(c -> !Conditions.TRUE.equals(c.getStatus()))
        .ifPresent(
            c -> line(out, "publishing", "stopped: " + c.getReason() + ": " + c.getMessage()));
    condition(status.getConditions(), Conditions.CHECKER_SUSPECT)
        .filter(c -> Conditions.TRUE.equals(c.getStatus()))
        .ifPresent(c -> line(out, "checker", "Suspect, " + c.getReason() + ": " + c.getMessage()));
    Optional<BackendStatus> found =
        status.getBackends().stream()
            .filter(b -> pod.getMetadata().getName().equals(b.getPod()))
            .findFirst();
    Optional<Endpoint> endpoint = endpoint(pod, facts.slices());
    backendOrNone(out, found, settings, now);
    sliceAndTraffic(out, endpoint);
    line(out, "to change", found.map(b -> Advice.of(pod, b, panic, settings, now)).orElse("-"));
  }

  /**
   * The pool's policy does not exist: Vigil neither probes the pool nor touches its slices, so the
   * only thing that changes the Pod's traffic through Vigil is creating the policy.
   */
  private static void missingPolicy(StringBuilder out, Pod pod, PoolFacts facts) {
    String ns = facts.pool().getMetadata().getNamespace();
    String policy = facts.pool().getSpec().getPolicyRef().getName();
    line(
        out,
        "policy",
        "HealthPolicy "
            + policy
            + " not found in namespace "
            + ns
            + ": Vigil does not probe this pool and leaves its slices as they were");
    Optional<Endpoint> endpoint = endpoint(pod, facts.slices());
    sliceAndTraffic(out, endpoint);
    line(
        out,
        "to change",
        "create HealthPolicy "
            + policy
            + " in namespace "
            + ns
            + " (or point spec.policyRef.name of the pool at one that exists).");
  }

  /** Where the Pod's endpoint is published, and whether it takes traffic. */
  private static void sliceAndTraffic(StringBuilder out, Optional<Endpoint> endpoint) {
    line(out, "slice", endpoint.map(WhyReport::sliceLine).orElse("not in the pool's slices"));
    boolean traffic =
        endpoint.map(e -> Boolean.TRUE.equals(e.getConditions().getReady())).orElse(false);
    line(out, "traffic", traffic ? "YES" : "NO");
  }

  private static void backendOrNone(
      StringBuilder out, Optional<BackendStatus> found, Settings settings, Instant now) {
    if (found.isEmpty()) {
      line(
          out,
          "backend",
          "none: the pool selects the Pod but lists no backend for it (no Pod IP yet, or the"
              + " Pod does not declare the pool's named targetPort)");
    } else {
      backend(out, found.get(), settings, now);
    }
  }

  private static void lastProbe(StringBuilder out, LastProbe p, Settings settings, Instant now) {
    line(
        out,
        "last probe",
        p == null
            ? "none yet"
            : (Boolean.TRUE.equals(p.getOk()) ? "passed " : "failed ")
                + Times.at(p.getAt(), now)
                + ", "
                + p.getLatencyMs()
                + " ms"
                + (p.getDetail() == null || p.getDetail().isBlank() ? "" : ": " + p.getDetail()));
    if (p != null && olderThanTwoIntervals(p.getAt(), settings, now)) {
      // Status is written when something changes, not after every probe: an Up backend whose
      // probes keep passing keeps the probe that last changed its status.
      note(
          out,
          "(recorded when the pool's status last changed: status is written on change, not"
              + " for a probe that changes only its time; probing goes on, one every "
              + settings.interval()
              + ")");
    }
  }

  private static void backend(StringBuilder out, BackendStatus b, Settings settings, Instant now) {
    BackendState state = b.getState() == null ? BackendState.UNKNOWN : b.getState();
    line(
        out,
        "state",
        display(state) + (b.getSince() == null ? "" : " since " + Times.at(b.getSince(), now)));
    if (b.getReason() != null && !b.getReason().isBlank()) {
      line(out, "reason", b.getReason());
    }
    lastProbe(out, b.getLastProbe(), settings, now);
    LastVote.describe(b, settings.downPercent()).ifPresent(v -> line(out, "votes", v));
    int ejections = b.getEjections() == null ? 0 : b.getEjections();
    line(
        out,
        "ejection",
        (b.getEjectedUntil() == null
                ? "not ejected"
                : "ejected until " + Times.at(b.getEjectedUntil(), now))
            + " ("
            + ejections
            + (ejections == 1 ? " ejection" : " ejections")
            + " counted)");
    line(
        out,
        "damping",
        b.getDampedUntil() != null
            ? "damped until " + Times.at(b.getDampedUntil(), now)
            : b.getMerit() == null ? "not damped" : "not damped (flap merit " + b.getMerit() + ")");
  }

  static String display(BackendState state) {
    String name = state.name();
    return name.charAt(0) + name.substring(1).toLowerCase(java.util.Locale.ROOT);
  }

  private static String sliceLine(Endpoint e) {
    var c = e.getConditions();
    return "ready="
        + c.getReady()
        + " serving="
        + c.getServing()
        + " terminating="
        + c.getTerminating();
  }

  /** The Pod's endpoint in the pool's slices, by target reference, else by address. */
  private static Optional<Endpoint> endpoint(Pod pod, List<EndpointSlice> slices) {
    String name = pod.getMetadata().getName();
    String ip = pod.getStatus() == null ? null : pod.getStatus().getPodIP();
    return slices.stream()
        .flatMap(s -> s.getEndpoints().stream())
        .filter(
            e ->
                (e.getTargetRef() != null && name.equals(e.getTargetRef().getName()))
                    || (ip != null && e.getAddresses().contains(ip)))
        .findFirst();
  }

  private static String podReady(Pod pod) {
    if (pod.getStatus() == null || pod.getStatus().getConditions() == null) {
      return "unknown";
    }
    return pod.getStatus().getConditions().stream()
        .filter(c -> "Ready".equals(c.getType()))
        .map(io.fabric8.kubernetes.api.model.PodCondition::getStatus)
        .findFirst()
        .orElse("unknown");
  }

  private static Optional<Condition> condition(List<Condition> conditions, String type) {
    return conditions == null
        ? Optional.empty()
        : conditions.stream().filter(c -> type.equals(c.getType())).findFirst();
  }

  private static boolean olderThanTwoIntervals(String at, Settings settings, Instant now) {
    try {
      long interval = Durations.millis("interval", settings.interval());
      return java.time.Duration.between(OffsetDateTime.parse(at).toInstant(), now).toMillis()
          > 2 * interval;
    } catch (RuntimeException e) {
      return false; // an unreadable time or interval: no note rather than a wrong one
    }
  }

  private static void note(StringBuilder out, String text) {
    out.append("  ").append(" ".repeat(12)).append(text).append('\n');
  }

  private static void line(StringBuilder out, String label, String value) {
    out.append("  ").append(String.format("%-12s", label + ":")).append(value).append('\n');
  }
}
