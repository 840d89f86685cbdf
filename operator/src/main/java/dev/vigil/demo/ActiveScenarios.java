package dev.vigil.demo;

import dev.vigil.demo.DemoBackend.Mode;
import dev.vigil.demo.Expectations.Unmet;
import dev.vigil.health.ActiveState;
import dev.vigil.runtime.BackendSnapshot;
import java.util.Set;

/** The scenarios of active checks: start-up, a backend down and back, a flapping one, damping. */
final class ActiveScenarios extends ScenarioStage {
  /** Down/Up flips the damping scenario tries before it gives up on seeing a damping. */
  private static final int MAX_FLIPS = 8;

  ActiveScenarios(Cast cast) {
    super(cast);
  }

  void startup() {
    progress.step = "start";
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
  void down(int i) {
    progress.step = "down";
    String ip = DemoCluster.address(i);
    timeline.log(name(i) + " dies: stops listening (connection refused)");
    long t0 = expect.now();
    cluster.set(i, Mode.REFUSE);
    long detect =
        expect.within(name(i) + " leaves the ready set", t0, upper(fall), o -> !ready(o, ip));
    timeline.log(name(i) + " left the ready set after " + Timeline.millis(detect));
    notBefore(detect, fall, name(i) + " left", "fail (" + Timeline.millis(lower(fall)) + ")");
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
    notBefore(recover, rise, name(i) + " returned", "pass");
    row("down", name(i) + " heals: back in the ready set", recover, configured("rise", rise), true);
  }

  /** Checks that a change took at least {@code probes} probes: it cannot come sooner. */
  private void notBefore(long took, int probes, String what, String could) {
    Expectations.check(
        took >= lower(probes),
        what + " after " + Timeline.millis(took) + ", before " + probes + " probes could " + could);
  }

  /** A backend that alternates 200 and 503 never reaches {@code fall} fails in a row. */
  void flap(int i) {
    progress.step = "flap";
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
  void damping(int i) {
    progress.step = "damping";
    dev.vigil.api.v1alpha1.Damping d = cluster.examples().damping();
    Expectations.check(d != null, "the example policy has a damping block");
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
    int flips = flipsUntilDamped(i);
    long dampedAfter = expect.now() - t0;
    row(
        "damping",
        name(i) + " damped after " + flips + " flips",
        dampedAfter,
        "merit > suppress",
        true);
    long releaseAt = heldBackWhileDamped(i);
    long wait = Math.max(0, releaseAt - System.currentTimeMillis());
    timeline.log(
        name(i) + " passes its probes but stays out: released in " + Timeline.millis(wait));
    dampedEventWritten();
    releasedWhenTheMeritDecays(i, releaseAt, wait, d);
  }

  /** Takes backend i Down and Up until it is damped; the flips it took, at least two. */
  private int flipsUntilDamped(int i) {
    int flips = 0;
    boolean damped = false;
    while (!damped && flips < MAX_FLIPS) {
      flips++;
      damped = flip(i, flips);
    }
    Expectations.check(damped, name(i) + " damped within " + MAX_FLIPS + " flips");
    Expectations.check(
        flips >= 2, name(i) + " damped after " + flips + " flip: one flip must never damp");
    return flips;
  }

  /**
   * Flip number {@code flip} (odd: Down, even: Up) of backend i, waited for until the runtime sees
   * it and logged with the merit; whether the backend is damped now.
   */
  private boolean flip(int i, int flip) {
    boolean goDown = flip % 2 == 1;
    cluster.set(i, goDown ? Mode.REFUSE : Mode.HEALTHY);
    ActiveState want = goDown ? ActiveState.DOWN : ActiveState.UP;
    expect.within(
        name(i) + " goes " + want,
        expect.now(),
        upper(goDown ? fall : rise),
        o -> snapshot(o, i) != null && snapshot(o, i).decision().state() == want);
    BackendSnapshot b = snapshot(expect.latest(), i);
    boolean damped = b != null && b.decision().damped();
    timeline.log(
        "flip "
            + flip
            + ": "
            + name(i)
            + " "
            + want
            + (b == null ? "" : String.format(", merit %.0f", b.decision().merit()))
            + (damped ? ": DAMPED" : ""));
    return damped;
  }

  /** Backend i healed is Up but held back (status Damped, not ready); returns its release time. */
  private long heldBackWhileDamped(int i) {
    String ip = DemoCluster.address(i);
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
    return snapshot(expect.latest(), i).decision().releaseAt();
  }

  /**
   * Logs whether the BackendDamped Event showed; Events are rate-limited, so none is no failure.
   */
  private void dampedEventWritten() {
    try {
      expect.within("a BackendDamped Event", expect.now(), slack, o -> o.hasEvent("BackendDamped"));
      timeline.log("Event BackendDamped written");
    } catch (Unmet e) {
      timeline.log("no BackendDamped Event yet (Events are rate-limited per pool)");
    }
  }

  /** Backend i comes back once its merit has decayed to the reuse threshold, not before. */
  private void releasedWhenTheMeritDecays(
      int i, long releaseAt, long wait, dev.vigil.api.v1alpha1.Damping d) {
    String ip = DemoCluster.address(i);
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
}
