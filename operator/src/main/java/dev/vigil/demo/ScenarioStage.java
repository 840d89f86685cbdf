package dev.vigil.demo;

import dev.vigil.api.v1alpha1.BackendStatus;
import dev.vigil.demo.Expectations.Unmet;
import dev.vigil.demo.Timeline.Row;
import dev.vigil.runtime.BackendSnapshot;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;

/**
 * What the {@link Scenarios} play on and with: the cluster, the proxy's traffic, the intake's
 * intruder, the timeline they record rows in, the expectations that end a run, the example's
 * timings, and the helpers every scenario uses (bounds, names, what an observation shows).
 */
abstract class ScenarioStage {
  /** The step running now, read by the live view from another thread. */
  static final class Progress {
    volatile String step = "start";
  }

  final DemoCluster cluster;
  final DemoTraffic traffic;
  final OutcomeReporter intruder;
  final Timeline timeline;
  final Expectations expect;
  final long interval;
  final long timeout;
  final int rise;
  final int fall;
  final double jitter;
  final long ejection;
  final long slack;
  final Progress progress;

  /**
   * Who plays: the cluster, the proxy's traffic, the intake's intruder (a token no TokenReview
   * accepts), the timeline, the expectations, and the step shown now.
   */
  record Cast(
      DemoCluster cluster,
      DemoTraffic traffic,
      OutcomeReporter intruder,
      Timeline timeline,
      Expectations expect,
      Progress progress) {}

  ScenarioStage(Cast cast) {
    this.progress = cast.progress();
    this.cluster = cast.cluster();
    this.traffic = cast.traffic();
    this.intruder = cast.intruder();
    this.timeline = cast.timeline();
    this.expect = cast.expect();
    DemoExamples ex = cluster.examples();
    this.interval = ex.intervalMs();
    this.timeout = ex.timeoutMs();
    this.rise = ex.rise();
    this.fall = ex.fall();
    this.jitter = ex.jitterPercent() / 100.0;
    this.ejection = ex.baseEjectionMs();
    // Publishing: a reconcile, slice writes and our poll; generous for a loaded CI machine.
    this.slack = 2_000 + interval;
  }

  /** Turns the proxy off and waits for its last report, so the verdicts stop moving. */
  void stopTraffic() {
    try {
      traffic.off(5_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new Unmet("interrupted");
    }
  }

  /**
   * How long the longest ejection among {@code backends} has left: an ejection lasts the base time
   * x the times the backend was ejected, so a backend ejected again while the cap held others stays
   * out longer than the base time.
   */
  long longestEjectionLeft(List<Integer> backends) {
    long since = expect.now();
    expect.within("an observation after the traffic stopped", since, slack, o -> true);
    Observation o = expect.latest();
    long now = System.currentTimeMillis();
    long left = 0;
    for (int i : backends) {
      BackendSnapshot b = snapshot(o, i);
      if (b != null && b.decision().ejected()) {
        left = Math.max(left, b.decision().ejectedUntil() - now);
      }
    }
    return left;
  }

  /** A report with a token the API server does not know: 401, and the backend stays in. */
  void forgedReportChangesNothing(int i, int errors) {
    List<OutcomeReporter.Outcome> batch = new ArrayList<>();
    for (int k = 0; k < errors + 1; k++) {
      batch.add(
          new OutcomeReporter.Outcome(
              cluster.namespace(),
              cluster.poolName(),
              DemoCluster.address(i) + ":" + cluster.port(),
              false,
              503,
              "upstream",
              1));
    }
    long t0 = expect.now();
    String answer;
    try {
      intruder.report(batch);
      answer = "accepted";
    } catch (Exception e) {
      answer = String.valueOf(e.getMessage());
    }
    Expectations.check(
        answer.contains("401"), "a report with a forged token is refused with 401, got: " + answer);
    expect.holds(
        name(i) + " stays in after a forged report of " + batch.size() + " failures",
        Math.max(500, interval),
        o -> ready(o, DemoCluster.address(i)));
    timeline.log(
        "a forged report of "
            + batch.size()
            + " failures for "
            + name(i)
            + ": 401, nothing changed");
    row(
        "passive",
        "forged token: report refused (401), nothing changed",
        expect.now() - t0,
        "TokenReview",
        true);
  }

  /** The longest a verdict after {@code probes} probes may take to show in the slices. */
  long upper(int probes) {
    return Math.round(probes * interval * (1 + jitter)) + timeout + slack;
  }

  /** The shortest: {@code probes - 1} full intervals after the first probe that saw the change. */
  long lower(int probes) {
    return Math.round((probes - 1) * interval * (1 - jitter));
  }

  String configured(String what, int probes) {
    return what
        + " x interval = "
        + probes
        + " x "
        + Timeline.millis(interval)
        + " = "
        + Timeline.millis(probes * interval);
  }

  void row(String stepName, String what, long measured, String configured, boolean held) {
    timeline.row(new Row(stepName, what, timeline.now(), measured, configured, held));
  }

  String name(int i) {
    return cluster.podName(i) + " (" + DemoCluster.address(i) + ")";
  }

  Set<String> allAddresses() {
    Set<String> all = new TreeSet<>();
    for (int i = 0; i < cluster.size(); i++) {
      all.add(DemoCluster.address(i));
    }
    return all;
  }

  static boolean ready(Observation o, String ip) {
    return Boolean.TRUE.equals(o.endpoints().get(ip));
  }

  BackendSnapshot snapshot(Observation o, int i) {
    if (o.view() == null) {
      return null;
    }
    String pod = cluster.podName(i);
    return o.view().backends().stream()
        .filter(b -> b.member().id().equals(pod))
        .findFirst()
        .orElse(null);
  }

  /** Backend i's state in the pool's published status, or "" when not there yet. */
  String stateOf(Observation o, int i) {
    return statusField(o, i, b -> b.getState() == null ? null : b.getState().name());
  }

  /** The detail of backend i's last probe in the pool's published status, or "". */
  String probeDetail(Observation o, int i) {
    return statusField(o, i, b -> b.getLastProbe() == null ? null : b.getLastProbe().getDetail());
  }

  /** One field of backend i's entry in the pool's published status; "" when absent. */
  private String statusField(Observation o, int i, Function<BackendStatus, String> field) {
    if (o.pool() == null
        || o.pool().getStatus() == null
        || o.pool().getStatus().getBackends() == null) {
      return "";
    }
    String pod = cluster.podName(i);
    return o.pool().getStatus().getBackends().stream()
        .filter(b -> pod.equals(b.getPod()))
        .map(field)
        .filter(Objects::nonNull)
        .findFirst()
        .orElse("");
  }
}
