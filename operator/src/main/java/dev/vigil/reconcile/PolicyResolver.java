package dev.vigil.reconcile;

import dev.vigil.api.v1alpha1.ActiveCheck;
import dev.vigil.api.v1alpha1.AgentCheck;
import dev.vigil.api.v1alpha1.Damping;
import dev.vigil.api.v1alpha1.FailurePercentageRule;
import dev.vigil.api.v1alpha1.HealthPolicy;
import dev.vigil.api.v1alpha1.HealthPolicySpec;
import dev.vigil.api.v1alpha1.HttpCheck;
import dev.vigil.api.v1alpha1.HttpHeader;
import dev.vigil.api.v1alpha1.HttpHeaderMatch;
import dev.vigil.api.v1alpha1.LatencyRule;
import dev.vigil.api.v1alpha1.PassiveCheck;
import dev.vigil.api.v1alpha1.Quorum;
import dev.vigil.api.v1alpha1.SuccessRateRule;
import dev.vigil.health.Confirmation;
import dev.vigil.health.DampingSettings;
import dev.vigil.health.HealthSettings;
import dev.vigil.health.HealthSettingsBuilder;
import dev.vigil.health.InvalidSettingsException;
import dev.vigil.health.QuorumSettings;
import dev.vigil.probe.CheckSpec;
import dev.vigil.probe.CheckSpecBuilder;
import dev.vigil.probe.ExpectedStatuses;
import dev.vigil.probe.ProbeProtocol;
import dev.vigil.probe.TlsMaterial;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Resolves a HealthPolicy into the immutable values the runtime uses. It runs on every reconcile of
 * a pool and of the policy (no I/O, so cheap), not once per policy change: the results are values,
 * equal for an unchanged policy, and the runtime applies only what differs (settings by value,
 * probe loops when the generation moved). Every error names the field (the API server enforces most
 * rules too; this is the same check for a mock API server, for objects written before a CRD
 * upgrade, and for the demo).
 */
public final class PolicyResolver {
  private PolicyResolver() {}

  /**
   * @throws InvalidSettingsException naming the first bad field
   */
  public static ResolvedPolicy resolve(HealthPolicy policy) {
    return resolve(policy, TenantFloors.NONE);
  }

  /**
   * As {@link #resolve(HealthPolicy)}, raised to the admin's floors: intervals below {@code
   * floors.minIntervalMs()} are raised to it, and a policy without {@code damping} gets the default
   * damping when the admin asks for it.
   *
   * @throws InvalidSettingsException naming the first bad field
   */
  public static ResolvedPolicy resolve(HealthPolicy policy, TenantFloors floors) {
    return resolve(policy, floors, ProbeTlsObjects.NONE);
  }

  /**
   * As {@link #resolve(HealthPolicy, TenantFloors)}, with {@code active.tls}'s CA bundle and client
   * certificate read from {@code tls} (informer caches, no I/O). The version moves with their
   * content too, so a rotated Secret restarts the probes with the new certificate.
   *
   * @throws InvalidSettingsException naming the first bad field, or the reference that does not
   *     resolve
   */
  public static ResolvedPolicy resolve(
      HealthPolicy policy, TenantFloors floors, ProbeTlsObjects tls) {
    HealthPolicySpec spec = policy.getSpec() == null ? new HealthPolicySpec() : policy.getSpec();
    ActiveCheck active = spec.getActive() == null ? new ActiveCheck() : spec.getActive();
    PassiveCheck passive = spec.getPassive() == null ? new PassiveCheck() : spec.getPassive();
    HealthSettings settings = settings(spec, active, passive, floors);
    CheckSpec check =
        check(active, settings).toBuilder().agent(agent(active, settings, floors)).build();
    TlsMaterial material =
        ProbeTlsMaterial.read(policy.getMetadata().getNamespace(), active.getTls(), tls);
    if (!material.equals(TlsMaterial.NONE)) {
      CheckSpec.Tls t = check.tls();
      check =
          check.toBuilder()
              .tls(new CheckSpec.Tls(t.insecureSkipVerify(), t.serverName(), material))
              .build();
    }
    Long generation = policy.getMetadata().getGeneration();
    long version = generation == null ? 0 : generation;
    return new ResolvedPolicy(
        policy.getMetadata().getName(),
        material.equals(TlsMaterial.NONE)
            ? version
            : version ^ Long.rotateLeft(material.fingerprint(), 20),
        settings,
        check,
        active.getPort());
  }

  private static HealthSettings settings(
      HealthPolicySpec spec, ActiveCheck active, PassiveCheck passive, TenantFloors floors) {
    HealthSettingsBuilder b = HealthSettings.builder();
    active(b, active, floors);
    ejection(b, passive);
    if (passive.getWindowFailures() != null) {
      b.windowFailures(passive.getWindowFailures());
    }
    b.failureWindowMs(
        Durations.millis("passive.failureWindow", or(passive.getFailureWindow(), "10s")));
    b.successRate(successRate(passive.getSuccessRate()));
    b.failurePercentage(failurePercentage(passive.getFailurePercentage()));
    b.latency(latency(passive.getLatency()));
    if (spec.getPanicThresholdPercent() != null) {
      b.panicThresholdPercent(spec.getPanicThresholdPercent());
    }
    b.panicExitPercent(spec.getPanicExitPercent());
    b.damping(floors.damping(damping(spec.getDamping())));
    quorum(b, spec.getQuorum());
    return b.build();
  }

  /**
   * {@code quorum}: absent is off; absent fields take the CRD's defaults, and an absent timeout is
   * computed from the (floored) interval, fall and probe timeout ({@link
   * QuorumSettings#defaultTimeoutMs}).
   */
  private static void quorum(HealthSettingsBuilder b, Quorum q) {
    if (q == null) {
      return;
    }
    b.quorum(
        or(q.getConfirmers(), QuorumSettings.DEFAULT_CONFIRMERS),
        or(q.getDownPercent(), Confirmation.DEFAULT_DOWN_PERCENT),
        q.getTimeout() == null ? null : Durations.millis("quorum.timeout", q.getTimeout()));
  }

  /** The active check's cadence and hysteresis; intervals held to the tenant's floor. */
  private static void active(HealthSettingsBuilder b, ActiveCheck active, TenantFloors floors) {
    b.intervalMs(
        floors.interval(Durations.millis("active.interval", or(active.getInterval(), "5s"))));
    b.timeoutMs(Durations.millis("active.timeout", or(active.getTimeout(), "2s")));
    if (active.getFastInterval() != null) {
      b.fastIntervalMs(
          floors.interval(Durations.millis("active.fastInterval", active.getFastInterval())));
    }
    if (active.getDownInterval() != null) {
      b.downIntervalMs(
          floors.interval(Durations.millis("active.downInterval", active.getDownInterval())));
    }
    if (active.getMaxInterval() != null) {
      b.maxIntervalMs(Durations.millis("active.maxInterval", active.getMaxInterval()));
    }
    if (active.getQuietMinRequests() != null) {
      b.quietMinRequests(active.getQuietMinRequests());
    }
    if (active.getJitterPercent() != null) {
      b.jitterPercent(active.getJitterPercent());
    }
    if (active.getRise() != null) {
      b.rise(active.getRise());
    }
    if (active.getFall() != null) {
      b.fall(active.getFall());
    }
  }

  /** Passive ejection: the error runs, how long an ejection lasts, the cap, decay, dry run. */
  private static void ejection(HealthSettingsBuilder b, PassiveCheck passive) {
    if (passive.getConsecutiveErrors() != null) {
      b.consecutiveErrors(passive.getConsecutiveErrors());
    }
    if (passive.getConsecutiveLocalOriginErrors() != null) {
      b.consecutiveLocalOriginErrors(passive.getConsecutiveLocalOriginErrors());
    }
    if (passive.getSplitLocalOrigin() != null) {
      b.splitLocalOrigin(passive.getSplitLocalOrigin());
    }
    b.baseEjectionTimeMs(
        Durations.millis("passive.baseEjectionTime", or(passive.getBaseEjectionTime(), "30s")));
    b.maxEjectionTimeMs(
        Durations.millis("passive.maxEjectionTime", or(passive.getMaxEjectionTime(), "300s")));
    if (passive.getMaxEjectionPercent() != null) {
      b.maxEjectionPercent(passive.getMaxEjectionPercent());
    }
    if (passive.getAlwaysEjectOne() != null) {
      b.alwaysEjectOne(passive.getAlwaysEjectOne());
    }
    b.sweepIntervalMs(
        Durations.millis("passive.sweepInterval", or(passive.getSweepInterval(), "10s")));
    if (passive.getUnejectOnActivePass() != null) {
      b.unejectOnActivePass(passive.getUnejectOnActivePass());
    }
    if (passive.getEnforce() != null) {
      b.enforce(passive.getEnforce());
    }
  }

  /** {@code damping}: absent is off; absent fields take the CRD's defaults. */
  private static DampingSettings damping(Damping d) {
    if (d == null) {
      return null;
    }
    DampingSettings def = DampingSettings.defaults();
    return new DampingSettings(
        or(d.getPenalty(), def.penalty()),
        or(d.getSuppressThreshold(), def.suppressThreshold()),
        or(d.getReuseThreshold(), def.reuseThreshold()),
        d.getHalfLife() == null
            ? def.halfLifeMs()
            : Durations.millis("damping.halfLife", d.getHalfLife()),
        d.getMaxSuppressTime() == null
            ? def.maxSuppressTimeMs()
            : Durations.millis("damping.maxSuppressTime", d.getMaxSuppressTime()));
  }

  /** {@code passive.successRate}: absent is off; absent fields take the CRD's defaults. */
  private static HealthSettings.SuccessRate successRate(SuccessRateRule r) {
    if (r == null) {
      return null;
    }
    HealthSettings.SuccessRate d = HealthSettings.SuccessRate.defaults();
    return new HealthSettings.SuccessRate(
        or(r.getMinimumHosts(), d.minimumHosts()),
        or(r.getRequestVolume(), d.requestVolume()),
        or(r.getStdevFactor(), d.stdevFactor()),
        or(r.getEnforce(), d.enforce()));
  }

  /** {@code passive.failurePercentage}: absent is off; absent fields take the CRD's defaults. */
  private static HealthSettings.FailurePercentage failurePercentage(FailurePercentageRule r) {
    if (r == null) {
      return null;
    }
    HealthSettings.FailurePercentage d = HealthSettings.FailurePercentage.defaults();
    return new HealthSettings.FailurePercentage(
        or(r.getThreshold(), d.threshold()),
        or(r.getMinimumHosts(), d.minimumHosts()),
        or(r.getRequestVolume(), d.requestVolume()),
        or(r.getEnforce(), d.enforce()));
  }

  /**
   * {@code passive.latency}: absent is off; absent fields take the CRD's defaults. The CRD has no
   * {@code minimumHosts} for this rule: {@link HealthSettings.Latency#DEFAULT_MINIMUM_HOSTS}.
   */
  private static HealthSettings.Latency latency(LatencyRule r) {
    if (r == null) {
      return null;
    }
    HealthSettings.Latency d = HealthSettings.Latency.defaults();
    return new HealthSettings.Latency(
        or(r.getFactor(), d.factor()),
        d.minimumHosts(),
        or(r.getMinimumSamples(), d.minimumSamples()),
        r.getFloor() == null
            ? d.floorMs()
            : Durations.millis("passive.latency.floor", r.getFloor()),
        or(r.getEnforce(), d.enforce()));
  }

  /**
   * {@code active.agent}: its interval defaults to the (floored) active interval, is held to the
   * tenant's floor, and must be longer than the timeout, the agent's deadline.
   */
  private static CheckSpec.Agent agent(
      ActiveCheck active, HealthSettings settings, TenantFloors floors) {
    AgentCheck a = active.getAgent();
    if (a == null) {
      return CheckSpec.Agent.NONE;
    }
    if (a.getPort() == null) {
      throw new InvalidSettingsException("active.agent.port", "required");
    }
    long interval =
        a.getInterval() == null
            ? settings.intervalMs()
            : floors.interval(Durations.millis("active.agent.interval", a.getInterval()));
    if (interval <= settings.timeoutMs()) {
      throw new InvalidSettingsException(
          "active.agent.interval",
          "must be longer than active.timeout ("
              + settings.timeoutMs()
              + "ms), got "
              + interval
              + "ms");
    }
    try {
      return new CheckSpec.Agent(a.getPort(), Duration.ofMillis(interval));
    } catch (IllegalArgumentException e) {
      throw naming(e);
    }
  }

  private static CheckSpec check(ActiveCheck active, HealthSettings settings) {
    try {
      CheckSpecBuilder b =
          CheckSpec.builder()
              .protocol(ProbeProtocol.valueOf(active.getProtocol().name()))
              .timeout(Duration.ofMillis(settings.timeoutMs()))
              .reuseConnection(Boolean.TRUE.equals(active.getReuseConnection()));
      if (active.getHttp() != null) {
        b.http(http(active.getHttp()));
      }
      b.http2(http2(active));
      if (active.getWebsocket() != null) {
        b.websocket(new CheckSpec.WebSocket(active.getWebsocket().getPath()));
      }
      if (active.getTcp() != null) {
        b.tcp(new CheckSpec.Tcp(active.getTcp().getSend(), active.getTcp().getExpect()));
      }
      if (active.getGrpc() != null) {
        b.grpc(
            new CheckSpec.Grpc(
                active.getGrpc().getService(),
                Boolean.TRUE.equals(active.getGrpc().getWatch())
                    && active.getProtocol() == dev.vigil.api.v1alpha1.Protocol.GRPC));
      }
      if (active.getTls() != null) {
        b.tls(
            new CheckSpec.Tls(
                Boolean.TRUE.equals(active.getTls().getInsecureSkipVerify()),
                active.getTls().getServerName()));
      }
      return b.build();
    } catch (InvalidSettingsException e) {
      throw e;
    } catch (IllegalArgumentException e) {
      throw naming(e);
    }
  }

  private static CheckSpec.Http http(HttpCheck http) {
    return new CheckSpec.Http(
        http.getMethod(),
        http.getPath(),
        http.getHost(),
        headers(http.getHeaders()),
        http.getExpectedStatuses() == null || http.getExpectedStatuses().isEmpty()
            ? ExpectedStatuses.DEFAULT
            : ExpectedStatuses.parse("active.http.expectedStatuses", http.getExpectedStatuses()),
        CheckSpec.Http.compileBodyMatch(http.getBodyMatch()),
        http.getBody(),
        headerMatch(http.getHeaderMatch()),
        ExpectedStatuses.parseOrNone("active.http.failFastStatuses", http.getFailFastStatuses()));
  }

  /** A check's own error ("active.http.path: ...") as an invalid setting naming that field. */
  private static InvalidSettingsException naming(IllegalArgumentException e) {
    String message = e.getMessage() == null ? "invalid" : e.getMessage();
    int colon = message.indexOf(':');
    String field =
        colon > 0 && message.startsWith("active.") ? message.substring(0, colon) : "active";
    String problem = colon > 0 ? message.substring(colon + 1).trim() : message;
    return new InvalidSettingsException(field, problem);
  }

  /** {@code active.http.version}: "1.1" (or absent) or "2", the latter for HTTP and HTTPS only. */
  private static boolean http2(ActiveCheck active) {
    String version = active.getHttp() == null ? null : active.getHttp().getVersion();
    if (version == null || version.equals("1.1")) {
      return false;
    }
    if (!version.equals("2")) {
      throw new InvalidSettingsException(
          "active.http.version", "must be \"1.1\" or \"2\", was \"" + version + "\"");
    }
    if (active.getProtocol() != dev.vigil.api.v1alpha1.Protocol.HTTP
        && active.getProtocol() != dev.vigil.api.v1alpha1.Protocol.HTTPS) {
      throw new InvalidSettingsException(
          "active.http.version", "\"2\" applies only to protocol HTTP or HTTPS");
    }
    return true;
  }

  private static List<CheckSpec.HeaderMatch> headerMatch(List<HttpHeaderMatch> matches) {
    if (matches == null) {
      return List.of();
    }
    List<CheckSpec.HeaderMatch> out = new ArrayList<>(matches.size());
    for (int i = 0; i < matches.size(); i++) {
      out.add(CheckSpec.HeaderMatch.of(i, matches.get(i).getName(), matches.get(i).getValue()));
    }
    return out;
  }

  private static Map<String, String> headers(List<HttpHeader> headers) {
    Map<String, String> out = new LinkedHashMap<>();
    if (headers != null) {
      for (HttpHeader h : headers) {
        out.put(h.getName(), h.getValue());
      }
    }
    return out;
  }

  private static <T> T or(T value, T fallback) {
    return value == null ? fallback : value;
  }
}
