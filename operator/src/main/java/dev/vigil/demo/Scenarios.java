package dev.vigil.demo;

import dev.vigil.demo.DemoBackend.Mode;
import dev.vigil.demo.Expectations.Unmet;
import dev.vigil.demo.Timeline.Row;
import dev.vigil.health.ActiveState;
import dev.vigil.runtime.BackendSnapshot;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * The scripted scenarios: one per rule, and the tour through all of them. Each step changes real
 * backends, waits for what a consumer of the EndpointSlices would see, and records the measured
 * time next to the configured one; an expectation that does not hold ends the run.
 */
final class Scenarios {
  static final List<String> NAMES =
      List.of("tour", "down", "flap", "damping", "passive", "panic", "cap");

  /** Down/Up flips the damping scenario tries before it gives up on seeing a damping. */
  private static final int MAX_FLIPS = 8;

  private final DemoCluster cluster;
  private final DemoTraffic traffic;
  private final OutcomeReporter intruder;
  private final Timeline timeline;
  private final Expectations expect;
  private final long interval;
  private final long timeout;
  private final int rise;
  private final int fall;
  private final double jitter;
  private final long ejection;
  private final long slack;
  private volatile String step = "start";

  /**
   * @param intruder posts to the intake with a token no TokenReview accepts
   */
  Scenarios(
      DemoCluster cluster,
      DemoTraffic traffic,
      OutcomeReporter intruder,
      Timeline timeline,
      Expectations expect) {
    this.cluster = cluster;
    this.traffic = traffic;
    this.intruder = intruder;
    this.timeline = timeline;
    this.expect = expect;
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

  String step() {
    return step;
  }

  void run(String name) {
    startup();
    switch (name) {
      case "down" -> down(0);
      case "flap" -> flap(1);
      case "passive" -> passive(2);
      case "panic" -> panic();
      case "cap" -> cap();
      case "damping" -> damping(0);
      default -> {
        down(0);
        flap(1);
        passive(2);
        panic();
        cap();
        damping(0); // last: its backend is no panic or cap victim, and its old merit has decayed
      }
    }
    step = "done";
  }

  private void startup() {
    step = "start";
    long t0 = expect.now();
    Set<String> all = allAddresses();
    java.util.function.Predicate<Observation> settled =
        o ->
            o.ready().equals(all)
                && !o.panic()
                && o.view() != null
                && o.view().snapshot().counts().available() == cluster.size()
                && o.pool() != null
                && o.pool().getStatus() != null
                && Integer.valueOf(cluster.size()).equals(o.pool().getStatus().getAvailable());
    // Not a rule's bound, only the start: generous, so a busy machine's JIT does not fail a run.
    long deadline = 30_000 + 4 * interval + 20L * cluster.size();
    long took =
        expect.within("all " + cluster.size() + " backends Up and ready", t0, deadline, settled);
    // First probes of a cold JVM can time out; wait until the published state stops moving.
    while (true) {
      try {
        expect.holds("all backends stay Up and ready", Math.max(1_000, 2 * interval), settled);
        break;
      } catch (Unmet e) {
        took =
            expect.within(
                "all " + cluster.size() + " backends Up and ready", t0, deadline + 10_000, settled);
      }
    }
    timeline.log("all " + cluster.size() + " backends probed Up and published ready");
    row(
        "start",
        "all " + cluster.size() + " backends first probed and published",
        took,
        "first probe within 1 interval",
        true);
  }

  /** A backend dies (connection refused), leaves after {@code fall} probes, and comes back. */
  private void down(int i) {
    step = "down";
    String ip = DemoCluster.address(i);
    timeline.log(name(i) + " dies: stops listening (connection refused)");
    long t0 = expect.now();
    cluster.set(i, Mode.REFUSE);
    long detect =
        expect.within(name(i) + " leaves the ready set", t0, upper(fall), o -> !ready(o, ip));
    timeline.log(name(i) + " left the ready set after " + Timeline.millis(detect));
    Expectations.check(
        detect >= lower(fall),
        name(i)
            + " left after "
            + Timeline.millis(detect)
            + ", before "
            + fall
            + " probes could fail ("
            + Timeline.millis(lower(fall))
            + ")");
    expect.within(
        name(i) + " shown Down with reason connection refused in status",
        t0,
        upper(fall) + slack,
        o -> stateOf(o, i).equals("DOWN") && probeDetail(o, i).contains("refused"));
    row("down", name(i) + " dies: leaves the ready set", detect, configured("fall", fall), true);

    timeline.log(name(i) + " heals");
    long t1 = expect.now();
    cluster.set(i, Mode.HEALTHY);
    long recover =
        expect.within(name(i) + " returns to the ready set", t1, upper(rise), o -> ready(o, ip));
    timeline.log(name(i) + " back in the ready set after " + Timeline.millis(recover));
    Expectations.check(
        recover >= lower(rise),
        name(i)
            + " returned after "
            + Timeline.millis(recover)
            + ", before "
            + rise
            + " probes could pass");
    row("down", name(i) + " heals: back in the ready set", recover, configured("rise", rise), true);
  }

  /** A backend that alternates 200 and 503 never reaches {@code fall} fails in a row. */
  private void flap(int i) {
    step = "flap";
    String ip = DemoCluster.address(i);
    long hold = Math.max(8, 3L * fall) * interval;
    timeline.log(name(i) + " flaps: 200, 503, 200, 503 ... on every health check");
    long failedBefore = cluster.backend(i).failedHealthChecks();
    cluster.set(i, Mode.FLAP);
    expect.holds(name(i) + " stays in the ready set while flapping", hold, o -> ready(o, ip));
    // Counted by the backend, not sampled from the view: at high speeds the observer's polls of
    // the last probe can fall on passing probes only.
    long failed = cluster.backend(i).failedHealthChecks() - failedBefore;
    Expectations.check(
        failed > 0, name(i) + " flapped: it answered health checks with 503 while it flapped");
    cluster.set(i, Mode.HEALTHY);
    timeline.log(
        name(i)
            + " stayed in for "
            + Timeline.millis(hold)
            + " of flapping ("
            + failed
            + " health checks answered 503); healed");
    row(
        "flap",
        name(i) + " flaps 200/503: stays in",
        hold,
        "never " + fall + " fails in a row",
        true);
  }

  /**
   * A backend that goes Down and Up again and again (docs/design.md §2.1): each flip adds the
   * penalty to its merit; the flip that takes the merit above the suppress threshold damps it.
   * Healed, it is Up but held back (status Damped) until its merit has decayed to the reuse
   * threshold.
   */
  private void damping(int i) {
    step = "damping";
    dev.vigil.api.v1alpha1.Damping d = cluster.examples().damping();
    Expectations.check(d != null, "the example policy has a damping block");
    String ip = DemoCluster.address(i);
    timeline.log(
        name(i)
            + " flaps slowly: down for "
            + fall
            + " probes, up for "
            + rise
            + ", again and again (damping: penalty "
            + d.getPenalty()
            + ", suppress above "
            + d.getSuppressThreshold()
            + ", half-life "
            + d.getHalfLife()
            + ")");
    long t0 = expect.now();
    int flips = 0;
    boolean damped = false;
    while (!damped && flips < MAX_FLIPS) {
      boolean goDown = flips % 2 == 0;
      cluster.set(i, goDown ? Mode.REFUSE : Mode.HEALTHY);
      ActiveState want = goDown ? ActiveState.DOWN : ActiveState.UP;
      expect.within(
          name(i) + " goes " + want,
          expect.now(),
          upper(goDown ? fall : rise),
          o -> snapshot(o, i) != null && snapshot(o, i).decision().state() == want);
      flips++;
      BackendSnapshot b = snapshot(expect.latest(), i);
      damped = b != null && b.decision().damped();
      timeline.log(
          "flip "
              + flips
              + ": "
              + name(i)
              + " "
              + want
              + (b == null ? "" : String.format(", merit %.0f", b.decision().merit()))
              + (damped ? ": DAMPED" : ""));
    }
    Expectations.check(damped, name(i) + " damped within " + MAX_FLIPS + " flips");
    Expectations.check(
        flips >= 2, name(i) + " damped after " + flips + " flip: one flip must never damp");
    long dampedAfter = expect.now() - t0;
    row(
        "damping",
        name(i) + " damped after " + flips + " flips",
        dampedAfter,
        "merit > suppress",
        true);

    cluster.set(i, Mode.HEALTHY);
    expect.within(
        name(i) + " Up but held back: status Damped, not ready",
        expect.now(),
        upper(rise) + slack,
        o ->
            snapshot(o, i) != null
                && snapshot(o, i).decision().state() == ActiveState.UP
                && snapshot(o, i).decision().damped()
                && !ready(o, ip)
                && stateOf(o, i).equals("DAMPED"));
    long releaseAt = snapshot(expect.latest(), i).decision().releaseAt();
    long wait = Math.max(0, releaseAt - System.currentTimeMillis());
    timeline.log(
        name(i) + " passes its probes but stays out: released in " + Timeline.millis(wait));
    try {
      expect.within("a BackendDamped Event", expect.now(), slack, o -> o.hasEvent("BackendDamped"));
      timeline.log("Event BackendDamped written");
    } catch (Unmet e) {
      timeline.log("no BackendDamped Event yet (Events are rate-limited per pool)");
    }
    long t1 = expect.now();
    long back =
        expect.within(
            name(i) + " released into the ready set", t1, wait + slack, o -> ready(o, ip));
    Expectations.check(
        System.currentTimeMillis() >= releaseAt,
        name(i) + " was published before its release time");
    timeline.log(
        name(i) + " released after its merit decayed: back after " + Timeline.millis(back));
    row(
        "damping",
        name(i) + " released when its merit decayed",
        back,
        "reuse " + d.getReuseThreshold() + ", half-life " + d.getHalfLife(),
        true);
  }

  /** Passes health checks, fails real requests: ejected by passive checks, back after the time. */
  private void passive(int i) {
    step = "passive";
    String ip = DemoCluster.address(i);
    int errors = cluster.examples().consecutiveErrors();
    forgedReportChangesNothing(i, errors);
    traffic.on(true);
    timeline.log("traffic on: a proxy sends real requests to the ready set and reports outcomes");
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
        o ->
            snapshot(o, i) != null
                && snapshot(o, i).decision().ejected()
                && snapshot(o, i).decision().state() == dev.vigil.health.ActiveState.UP
                && stateOf(o, i).equals("EJECTED"));
    long ejectedAt = t0 + detect;
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
  private void panic() {
    step = "panic";
    int n = cluster.size();
    int threshold = cluster.examples().panicThresholdPercent();
    int failing = 1;
    while ((long) (n - failing) * 100 >= (long) threshold * n) {
      failing++;
    }
    Mode[] modes = {Mode.FAILING, Mode.REFUSE, Mode.HANG};
    List<Integer> victims = new ArrayList<>();
    for (int k = 0; k < failing; k++) {
      victims.add(n - 1 - k);
    }
    timeline.log(
        failing
            + " of "
            + n
            + " backends fail (503, refused, hang): below the "
            + threshold
            + "% panic threshold");
    long t0 = expect.now();
    for (int k = 0; k < victims.size(); k++) {
      cluster.set(victims.get(k), modes[k % modes.length]);
    }
    Set<String> all = allAddresses();
    int available = n - failing;
    long enter =
        expect.within(
            "panic entered with every backend published ready",
            t0,
            upper(fall) + slack,
            o -> o.panic() && o.statusPanic() && o.ready().equals(all));
    expect.within(
        "status shows " + (n - failing) + " available in panic",
        t0,
        upper(fall) + 2 * slack,
        o -> o.pool() != null && o.pool().getStatus().getAvailable() == available);
    timeline.log(
        "PANIC after "
            + Timeline.millis(enter)
            + ": all "
            + n
            + " published ready, status "
            + (n - failing)
            + "/"
            + n
            + " available");
    row(
        "panic",
        (n - failing) + "/" + n + " available: panic, all published",
        enter,
        "< " + threshold + "% available, " + configured("fall", fall),
        true);

    timeline.log("the " + failing + " failing backends heal");
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
  private void cap() {
    step = "cap";
    int n = cluster.size();
    int percent = cluster.examples().maxEjectionPercent();
    int allowed = Math.max(0, percent * n / 100);
    List<Integer> bad = new ArrayList<>();
    for (int k = 0; k <= allowed; k++) {
      bad.add(n - 1 - k);
    }
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
    // Heal at once: with traffic on, an ejection that ends meets new failures and is followed by
    // a longer one (base x times ejected), so time spent here would only lengthen the wait below.
    stopTraffic();
    for (int i : bad) {
      cluster.set(i, Mode.HEALTHY);
    }
    long healedAt = expect.now();
    long left = longestEjectionLeft(bad);
    boolean event = false;
    try {
      expect.within(
          "an EjectionRefused Event", t0, refused + slack, o -> o.hasEvent("EjectionRefused"));
      event = true;
      timeline.log("Event EjectionRefused written");
    } catch (Unmet e) {
      timeline.log(
          "no EjectionRefused Event yet (Events are rate-limited per pool); the metric counted it");
    }
    row(
        "cap",
        allowed + " ejected, 1 refused" + (event ? " (Event EjectionRefused)" : ""),
        refused,
        "maxEjectionPercent " + percent + "%",
        true);

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

  /** Turns the proxy off and waits for its last report, so the verdicts stop moving. */
  private void stopTraffic() {
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
  private long longestEjectionLeft(List<Integer> backends) {
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
  private void forgedReportChangesNothing(int i, int errors) {
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

  // ---- helpers ---------------------------------------------------------------------------------

  /** The longest a verdict after {@code probes} probes may take to show in the slices. */
  private long upper(int probes) {
    return Math.round(probes * interval * (1 + jitter)) + timeout + slack;
  }

  /** The shortest: {@code probes - 1} full intervals after the first probe that saw the change. */
  private long lower(int probes) {
    return Math.round((probes - 1) * interval * (1 - jitter));
  }

  private String configured(String what, int probes) {
    return what
        + " x interval = "
        + probes
        + " x "
        + Timeline.millis(interval)
        + " = "
        + Timeline.millis(probes * interval);
  }

  private void row(String stepName, String what, long measured, String configured, boolean held) {
    timeline.row(new Row(stepName, what, timeline.now(), measured, configured, held));
  }

  private String name(int i) {
    return cluster.podName(i) + " (" + DemoCluster.address(i) + ")";
  }

  private Set<String> allAddresses() {
    Set<String> all = new TreeSet<>();
    for (int i = 0; i < cluster.size(); i++) {
      all.add(DemoCluster.address(i));
    }
    return all;
  }

  private static boolean ready(Observation o, String ip) {
    return Boolean.TRUE.equals(o.endpoints().get(ip));
  }

  private BackendSnapshot snapshot(Observation o, int i) {
    if (o.view() == null) {
      return null;
    }
    String pod = cluster.podName(i);
    return o.view().backends().stream()
        .filter(b -> b.member().id().equals(pod))
        .findFirst()
        .orElse(null);
  }

  private String stateOf(Observation o, int i) {
    if (o.pool() == null
        || o.pool().getStatus() == null
        || o.pool().getStatus().getBackends() == null) {
      return "";
    }
    String pod = cluster.podName(i);
    return o.pool().getStatus().getBackends().stream()
        .filter(b -> pod.equals(b.getPod()) && b.getState() != null)
        .map(b -> b.getState().name())
        .findFirst()
        .orElse("");
  }

  private String probeDetail(Observation o, int i) {
    if (o.pool() == null
        || o.pool().getStatus() == null
        || o.pool().getStatus().getBackends() == null) {
      return "";
    }
    String pod = cluster.podName(i);
    return o.pool().getStatus().getBackends().stream()
        .filter(
            b ->
                pod.equals(b.getPod())
                    && b.getLastProbe() != null
                    && b.getLastProbe().getDetail() != null)
        .map(b -> b.getLastProbe().getDetail())
        .findFirst()
        .orElse("");
  }
}
