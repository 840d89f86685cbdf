package dev.vigil.demo;

import dev.vigil.demo.DemoBackend.Mode;
import dev.vigil.demo.Expectations.Unmet;
import dev.vigil.runtime.BackendSnapshot;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/** The scenarios of real-request outcomes: passive ejection, panic, the ejection cap. */
final class PassiveScenarios extends ScenarioStage {

  PassiveScenarios(Cast cast) {
    super(cast);
  }

  void passive(int i) {
    progress.step = "passive";
    forgedReportChangesNothing(i, cluster.examples().consecutiveErrors());
    traffic.on(true);
    timeline.log("traffic on: a proxy sends real requests to the ready set and reports outcomes");
    long ejectedAt = ejectedForFailedRequests(i);
    backWhenTheEjectionEnds(i, ejectedAt);
  }

  /** Backend i passes its health checks but fails real requests; returns when it was ejected. */
  private long ejectedForFailedRequests(int i) {
    String ip = DemoCluster.address(i);
    int errors = cluster.examples().consecutiveErrors();
    timeline.log(
        name(i)
            + " passes "
            + cluster.examples().healthPath()
            + " but answers 500 to real requests");
    long t0 = expect.now();
    cluster.set(i, Mode.TRAFFIC_FAILS);
    long detect =
        expect.within(
            name(i) + " ejected by passive checks", t0, slack + 20L * interval, o -> !ready(o, ip));
    expect.within(
        name(i) + " ejected while its active checks pass (Up, shown Ejected in status)",
        t0,
        slack + 20L * interval,
        o -> ejectedWhileUp(o, i));
    timeline.log(
        name(i)
            + " ejected after "
            + Timeline.millis(detect)
            + " ("
            + errors
            + " failed requests in a row)");
    row(
        "passive",
        name(i) + " fails real traffic: ejected",
        detect,
        errors + " consecutive errors",
        true);
    return t0 + detect;
  }

  /** Ejected by the runtime while its active state is Up, and shown Ejected in status. */
  private boolean ejectedWhileUp(Observation o, int i) {
    BackendSnapshot b = snapshot(o, i);
    return b != null
        && b.decision().ejected()
        && b.decision().state() == dev.vigil.health.ActiveState.UP
        && stateOf(o, i).equals("EJECTED");
  }

  /** Backend i healed stays out until its ejection ends, and not much less. */
  private void backWhenTheEjectionEnds(int i, long ejectedAt) {
    String ip = DemoCluster.address(i);
    cluster.set(i, Mode.HEALTHY);
    timeline.log("the fix is rolled out to " + name(i) + "; it stays out until its ejection ends");
    long back =
        expect.within(
            name(i) + " back after its ejection time",
            ejectedAt,
            ejection + slack,
            o -> ready(o, ip));
    Expectations.check(
        back >= ejection * 8 / 10,
        name(i)
            + " came back after "
            + Timeline.millis(back)
            + ", before its ejection time "
            + Timeline.millis(ejection));
    traffic.on(false);
    timeline.log(name(i) + " back after " + Timeline.millis(back) + "; traffic off");
    row(
        "passive",
        name(i) + " back after its ejection",
        back,
        "baseEjectionTime " + Timeline.millis(ejection),
        true);
  }

  /** More than the threshold fail: panic publishes every decided backend; healing ends it. */
  void panic() {
    progress.step = "panic";
    int n = cluster.size();
    int threshold = cluster.examples().panicThresholdPercent();
    int failing = 1;
    while ((long) (n - failing) * 100 >= (long) threshold * n) {
      failing++;
    }
    List<Integer> victims = lastBackends(failing);
    panicEntered(victims, threshold);
    panicExited(victims);
  }

  /** The last {@code count} backends, last first: the scenarios' victims. */
  private List<Integer> lastBackends(int count) {
    List<Integer> last = new ArrayList<>();
    for (int k = 0; k < count; k++) {
      last.add(cluster.size() - 1 - k);
    }
    return last;
  }

  /** The victims fail (503, refused, hang): panic publishes every backend ready. */
  private void panicEntered(List<Integer> victims, int threshold) {
    int n = cluster.size();
    long t0 = failBelowThePanicThreshold(victims, threshold);
    Set<String> all = allAddresses();
    int available = n - victims.size();
    long enter =
        expect.within(
            "panic entered with every backend published ready",
            t0,
            upper(fall) + slack,
            o -> o.panic() && o.statusPanic() && o.ready().equals(all));
    expect.within(
        "status shows " + available + " available in panic",
        t0,
        upper(fall) + 2 * slack,
        o -> o.pool() != null && o.pool().getStatus().getAvailable() == available);
    timeline.log(
        "PANIC after "
            + Timeline.millis(enter)
            + ": all "
            + n
            + " published ready, status "
            + available
            + "/"
            + n
            + " available");
    row(
        "panic",
        available + "/" + n + " available: panic, all published",
        enter,
        "< " + threshold + "% available, " + configured("fall", fall),
        true);
  }

  /** The victims fail, in turns: 503, connection refused, no answer; returns when they started. */
  private long failBelowThePanicThreshold(List<Integer> victims, int threshold) {
    timeline.log(
        victims.size()
            + " of "
            + cluster.size()
            + " backends fail (503, refused, hang): below the "
            + threshold
            + "% panic threshold");
    long t0 = expect.now();
    Mode[] modes = {Mode.FAILING, Mode.REFUSE, Mode.HANG};
    for (int k = 0; k < victims.size(); k++) {
      cluster.set(victims.get(k), modes[k % modes.length]);
    }
    return t0;
  }

  /** The victims heal: panic ends with every backend available. */
  private void panicExited(List<Integer> victims) {
    int n = cluster.size();
    Set<String> all = allAddresses();
    timeline.log("the " + victims.size() + " failing backends heal");
    long t1 = expect.now();
    for (int i : victims) {
      cluster.set(i, Mode.HEALTHY);
    }
    long exit =
        expect.within(
            "panic ends with every backend available",
            t1,
            upper(rise) + timeout + slack,
            o ->
                !o.panic()
                    && !o.statusPanic()
                    && o.ready().equals(all)
                    && o.pool().getStatus().getAvailable() == n);
    timeline.log("panic over after " + Timeline.millis(exit));
    row("panic", "healed: panic ends", exit, configured("rise", rise), true);
  }

  /** More backends misbehave than {@code maxEjectionPercent} allows out: the cap refuses. */
  void cap() {
    progress.step = "cap";
    int n = cluster.size();
    int percent = cluster.examples().maxEjectionPercent();
    int allowed = Math.max(0, percent * n / 100);
    List<Integer> bad = lastBackends(allowed + 1);
    double refusedBefore = cluster.counter("vigil_ejections_refused_total");
    traffic.on(true);
    timeline.log(
        bad.size()
            + " backends fail real requests; maxEjectionPercent "
            + percent
            + "% lets "
            + allowed
            + " of "
            + n
            + " out");
    long t0 = expect.now();
    for (int i : bad) {
      cluster.set(i, Mode.TRAFFIC_FAILS);
    }
    long refused = refusedByTheCap(bad, allowed, refusedBefore, t0);
    // Heal at once: with traffic on, an ejection that ends meets new failures and is followed by
    // a longer one (base x times ejected), so time spent here would only lengthen the wait below.
    stopTraffic();
    for (int i : bad) {
      cluster.set(i, Mode.HEALTHY);
    }
    long healedAt = expect.now();
    long left = longestEjectionLeft(bad);
    boolean event = refusalEventWritten(t0, refused);
    row(
        "cap",
        allowed + " ejected, 1 refused" + (event ? " (Event EjectionRefused)" : ""),
        refused,
        "maxEjectionPercent " + percent + "%",
        true);
    allBackWhenTheEjectionsEnd(healedAt, left);
  }

  /**
   * Waits until {@code allowed} of the {@code bad} backends are ejected and the cap refused the
   * next, checks that exactly one failing backend was kept in; returns when, after {@code t0}.
   */
  private long refusedByTheCap(List<Integer> bad, int allowed, double refusedBefore, long t0) {
    long refused =
        expect.within(
            allowed + " ejected and the next ejection refused by the cap",
            t0,
            slack + 20L * interval,
            o ->
                o.view() != null
                    && o.view().snapshot().counts().ejected() == allowed
                    && o.refusedEjections() > refusedBefore);
    Set<String> stillIn = new TreeSet<>();
    for (int i : bad) {
      BackendSnapshot b = snapshot(expect.latest(), i);
      if (b != null && !b.decision().ejected()) {
        stillIn.add(name(i));
      }
    }
    Expectations.check(
        stillIn.size() == 1, "exactly one failing backend kept in by the cap, got " + stillIn);
    timeline.log(
        "cap: "
            + allowed
            + " ejected, ejection of "
            + String.join("", stillIn)
            + " REFUSED after "
            + Timeline.millis(refused));
    return refused;
  }

  /** Whether the EjectionRefused Event showed; Events are rate-limited, so none is no failure. */
  private boolean refusalEventWritten(long t0, long refused) {
    try {
      expect.within(
          "an EjectionRefused Event", t0, refused + slack, o -> o.hasEvent("EjectionRefused"));
      timeline.log("Event EjectionRefused written");
      return true;
    } catch (Unmet e) {
      timeline.log(
          "no EjectionRefused Event yet (Events are rate-limited per pool); the metric counted it");
      return false;
    }
  }

  /** Every backend back in once the longest ejection ({@code left} after healing) has ended. */
  private void allBackWhenTheEjectionsEnd(long healedAt, long left) {
    Set<String> all = allAddresses();
    timeline.log(
        "healed, traffic off; the longest ejection has " + Timeline.millis(left) + " left");
    long back =
        expect.within(
            "every backend back when the ejections end (the longest had "
                + Timeline.millis(left)
                + " left)",
            healedAt,
            left + slack,
            o -> o.ready().equals(all));
    timeline.log("all back after " + Timeline.millis(back));
    row(
        "cap",
        "healed: all back",
        back,
        "ejection left " + Timeline.millis(left) + " (base " + Timeline.millis(ejection) + ")",
        true);
  }
}
