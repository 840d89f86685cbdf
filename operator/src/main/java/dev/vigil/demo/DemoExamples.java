package dev.vigil.demo;

import dev.vigil.api.v1alpha1.ActiveCheck;
import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.api.v1alpha1.Damping;
import dev.vigil.api.v1alpha1.HealthPolicy;
import dev.vigil.api.v1alpha1.PassiveCheck;
import dev.vigil.health.DampingSettings;
import dev.vigil.health.HealthSettings;
import dev.vigil.reconcile.Durations;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * {@code examples/web.yaml} as the demo applies it: read from the repository when the demo runs in
 * a checkout, else from the copy packaged in the jar (a test keeps the two equal), with the
 * policy's intervals scaled by {@code --speed} and nothing else changed.
 *
 * @param source where the file was read from
 * @param namespace the Namespace
 * @param deployment the Deployment whose Pod template the demo's Pods follow
 * @param policy the HealthPolicy, intervals scaled
 * @param pool the BackendPool, as written
 * @param scale the factor every duration of the policy was multiplied by
 * @param original the policy's interval, timeout and base ejection time as written (ms)
 */
public record DemoExamples(
    String source,
    Namespace namespace,
    Deployment deployment,
    HealthPolicy policy,
    BackendPool pool,
    double scale,
    long[] original) {

  /** The example the demo shows. */
  public static final String FILE = "examples/web.yaml";

  private static final Map<String, Class<? extends HasMetadata>> KINDS =
      Map.of(
          "Namespace", Namespace.class,
          "Deployment", Deployment.class,
          "HealthPolicy", HealthPolicy.class,
          "BackendPool", BackendPool.class);

  /**
   * Loads the example and scales the policy's durations: at speed 1 by one half (the tour then
   * takes about a minute), at speed s by 1/(2s), never below the smallest interval Vigil accepts.
   */
  public static DemoExamples load(double speed) {
    Path repo = Path.of(FILE);
    String text;
    String source;
    try {
      if (Files.isRegularFile(repo)) {
        text = Files.readString(repo, StandardCharsets.UTF_8);
        source = repo.toAbsolutePath().normalize().toString();
      } else {
        try (InputStream in = DemoExamples.class.getClassLoader().getResourceAsStream(FILE)) {
          if (in == null) {
            throw new IllegalStateException(FILE + " is neither here nor in the jar");
          }
          text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        source = FILE + " (the copy in the jar)";
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return parse(text, source, speed);
  }

  static DemoExamples parse(String text, String source, double speed) {
    List<HasMetadata> docs = documents(text);
    Namespace ns = last(docs, Namespace.class);
    Deployment deployment = last(docs, Deployment.class);
    HealthPolicy policy = last(docs, HealthPolicy.class);
    BackendPool pool = last(docs, BackendPool.class);
    if (ns == null || deployment == null || policy == null || pool == null) {
      throw new IllegalStateException(
          source + " must hold a Namespace, a Deployment, a HealthPolicy and a BackendPool");
    }
    ActiveCheck active = policy.getSpec().getActive();
    long interval = Durations.millis("active.interval", active.getInterval());
    long timeout = Durations.millis("active.timeout", active.getTimeout());
    PassiveCheck passive = policy.getSpec().getPassive();
    long base = Durations.millis("passive.baseEjectionTime", passive.getBaseEjectionTime());
    double scale = Math.max(1 / (2 * speed), (double) HealthSettings.MIN_INTERVAL_MS / interval);
    long scaledTimeout = scaleIntervalAndTimeout(active, interval, timeout, scale);
    scalePassive(passive, base, scale);
    scaleEdgeIntervals(active, scale, scaledTimeout + 1);
    scaleDamping(policy.getSpec().getDamping(), scale);
    return new DemoExamples(
        source, ns, deployment, policy, pool, scale, new long[] {interval, timeout, base});
  }

  /** The last document of {@code type}, or null. */
  private static <T> T last(List<HasMetadata> docs, Class<T> type) {
    return docs.stream().filter(type::isInstance).map(type::cast).reduce((a, b) -> b).orElse(null);
  }

  /** Scales the probe interval and its timeout; returns the timeout, in ms. */
  private static long scaleIntervalAndTimeout(
      ActiveCheck active, long interval, long timeout, double scale) {
    active.setInterval(scaled(interval, scale));
    // Slower (scale above 1): the timeout scales as the rest. Faster: a scaled timeout below a few
    // hundred ms measures the machine, not the backend, so it keeps up to three quarters of the
    // interval, at most 400 ms (or the example's own timeout when that is shorter).
    long scaledInterval = Math.round(interval * scale);
    long scaledTimeout =
        scale >= 1
            ? Math.round(timeout * scale)
            : Math.min(
                timeout,
                Math.max(Math.round(timeout * scale), Math.min(scaledInterval * 3 / 4, 400)));
    active.setTimeout(scaledTimeout + "ms");
    return scaledTimeout;
  }

  /** Scales the ejection times and the decay sweep. */
  private static void scalePassive(PassiveCheck passive, long base, double scale) {
    passive.setBaseEjectionTime(scaled(base, scale));
    if (passive.getMaxEjectionTime() != null) {
      passive.setMaxEjectionTime(
          scaled(Durations.millis("passive.maxEjectionTime", passive.getMaxEjectionTime()), scale));
    }
    // Decay at the pace of the rest (docs/design.md §1 default 10s when the example leaves it out).
    long sweep =
        passive.getSweepInterval() == null
            ? 10_000
            : Durations.millis("passive.sweepInterval", passive.getSweepInterval());
    passive.setSweepInterval(scaled(sweep, scale));
  }

  /** Scales fastInterval and downInterval where given, each above the timeout ({@code min}). */
  private static void scaleEdgeIntervals(ActiveCheck active, double scale, long min) {
    if (active.getFastInterval() != null) {
      active.setFastInterval(
          atLeast(Durations.millis("active.fastInterval", active.getFastInterval()), scale, min));
    }
    if (active.getDownInterval() != null) {
      active.setDownInterval(
          atLeast(Durations.millis("active.downInterval", active.getDownInterval()), scale, min));
    }
  }

  /**
   * Scales the damping block, if any: the half-life has a floor of 1s; maxSuppressTime keeps its
   * ratio to it.
   */
  private static void scaleDamping(Damping damping, double scale) {
    if (damping == null) {
      return;
    }
    long halfLife = Durations.millis("damping.halfLife", or(damping.getHalfLife(), "60s"));
    long maxSuppress =
        Durations.millis("damping.maxSuppressTime", or(damping.getMaxSuppressTime(), "300s"));
    long scaledHalfLife = Math.max(DampingSettings.MIN_HALF_LIFE_MS, Math.round(halfLife * scale));
    damping.setHalfLife(scaledHalfLife + "ms");
    damping.setMaxSuppressTime(
        Math.max(1, Math.round((double) maxSuppress * scaledHalfLife / halfLife)) + "ms");
  }

  private static String scaled(long ms, double scale) {
    return Math.max(1, Math.round(ms * scale)) + "ms";
  }

  private static String atLeast(long ms, double scale, long min) {
    return Math.max(Math.max(HealthSettings.MIN_INTERVAL_MS, min), Math.round(ms * scale)) + "ms";
  }

  private static String or(String value, String fallback) {
    return value == null ? fallback : value;
  }

  /** The policy's damping block (scaled), or null when the example has none. */
  public Damping damping() {
    return policy.getSpec().getDamping();
  }

  private static List<HasMetadata> documents(String text) {
    List<HasMetadata> out = new ArrayList<>();
    for (String doc : text.split("(?m)^---\\s*$")) {
      if (doc.lines().allMatch(l -> l.isBlank() || l.stripLeading().startsWith("#"))) {
        continue;
      }
      GenericKubernetesResource generic =
          Serialization.unmarshal(doc, GenericKubernetesResource.class);
      Class<? extends HasMetadata> type = KINDS.get(generic.getKind());
      if (type == null) {
        throw new IllegalStateException(
            FILE + ": the demo does not know kind " + generic.getKind());
      }
      out.add(Serialization.unmarshal(doc, type));
    }
    return out;
  }

  /** The settings the scaled policy resolves to (intervals in ms). */
  public long intervalMs() {
    return Durations.millis("active.interval", policy.getSpec().getActive().getInterval());
  }

  public long timeoutMs() {
    return Durations.millis("active.timeout", policy.getSpec().getActive().getTimeout());
  }

  public long baseEjectionMs() {
    return Durations.millis(
        "passive.baseEjectionTime", policy.getSpec().getPassive().getBaseEjectionTime());
  }

  public int rise() {
    return policy.getSpec().getActive().getRise();
  }

  public int fall() {
    return policy.getSpec().getActive().getFall();
  }

  public int jitterPercent() {
    Integer j = policy.getSpec().getActive().getJitterPercent();
    return j == null ? 10 : j;
  }

  public int maxEjectionPercent() {
    return policy.getSpec().getPassive().getMaxEjectionPercent();
  }

  public int consecutiveErrors() {
    return policy.getSpec().getPassive().getConsecutiveErrors();
  }

  public int panicThresholdPercent() {
    return policy.getSpec().getPanicThresholdPercent();
  }

  public String healthPath() {
    return policy.getSpec().getActive().getHttp().getPath();
  }
}
