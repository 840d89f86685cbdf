package dev.vigil.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.vigil.health.ActiveState;
import dev.vigil.health.AdminState;
import dev.vigil.health.AgentState;
import dev.vigil.health.Backend;
import dev.vigil.health.BackendHold;
import dev.vigil.health.BackendView;
import dev.vigil.health.DampingSettings;
import dev.vigil.health.HealthSettings;
import dev.vigil.health.Origin;
import dev.vigil.health.PoolHealth;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The view's one object per backend (issue 37) gives back exactly what the three records it
 * replaced held: the core's {@link BackendView}, the last probe, the dry-run reason and the votes.
 */
class BackendSnapshotTest {
  private static final Member WEB =
      Member.of("web-0", "uid", "10.0.0.1", 8080, "n1", null, false, false, List.of());

  @Test
  void givesBackEveryFieldItWasMadeFrom() {
    BackendView d =
        new BackendView(
            "web-0",
            ActiveState.DOWN,
            1,
            2,
            3,
            4,
            5,
            true,
            1_000L,
            true,
            false,
            true,
            1234.5,
            2_000L,
            3_000L,
            new BackendHold(BackendHold.Kind.DRAIN, "agent", true, "disk full"));
    ProbeSummary probe = new ProbeSummary(4_000L, false, 17, "status 503");
    Confirmer.Votes votes = new Confirmer.Votes(List.of("a"), List.of("b"), List.of("c"));
    BackendSnapshot b =
        new BackendSnapshot(WEB, d, true, false, 5_000L, probe, "dry run", votes, List.of());

    assertEquals(d, b.decision());
    assertEquals(probe, b.lastProbe());
    assertEquals("dry run", b.wouldEject());
    assertEquals(votes, b.votes());
    assertTrue(b.published());
    assertFalse(b.healthy());
    assertEquals(5_000L, b.since());
    assertEquals(d.ejectedUntil(), b.ejectedUntil());
    assertEquals(d.hold(), b.hold());
    assertEquals(d.ejected(), b.ejected());
    assertEquals(d.available(), b.available());
    assertTrue(b.marked());
  }

  @Test
  void aPlainBackendCarriesNoMarksAndNoProbe() {
    BackendView d =
        new BackendView(
            "web-0", ActiveState.UP, 2, 0, 0, 0, 0, false, 0, false, true, false, 0, 0, 0, null);
    BackendSnapshot b = new BackendSnapshot(WEB, d, true, true, 7L, null, null, null, List.of());

    assertEquals(d, b.decision());
    assertNull(b.lastProbe());
    assertNull(b.wouldEject());
    assertNull(b.votes());
    assertEquals(BackendHold.NONE, b.hold());
    assertFalse(b.marked());
    assertEquals(b, new BackendSnapshot(WEB, d, true, true, 7L, null, null, null, List.of()));
  }

  @Test
  void refusesADecisionOfAnotherMember() {
    BackendView other =
        new BackendView(
            "web-1", ActiveState.UP, 0, 0, 0, 0, 0, false, 0, false, true, false, 0, 0, 0, null);
    assertThrows(
        IllegalArgumentException.class,
        () -> new BackendSnapshot(WEB, other, true, true, 0, null, null, null, List.of()));
  }

  /**
   * Random probes, outcomes, holds, damping and dry-run marks on a real core: after every event
   * each tracked backend's snapshot equals what the former records held (the core's view, the probe
   * fields), and carries marks exactly when the backend has any.
   */
  @Test
  void aTrackedBackendsSnapshotEqualsTheCoresViewAfterRandomEvents() {
    HealthSettings settings =
        HealthSettings.builder()
            .rise(2)
            .fall(2)
            .consecutiveErrors(2)
            .maxEjectionPercent(50)
            .baseEjectionTimeMs(3_000)
            .damping(new DampingSettings(1000, 1500, 750, 10_000, 60_000))
            .build();
    PoolHealth health = new PoolHealth(settings);
    List<TrackedBackend> tracked = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      Member m =
          Member.of("web-" + i, "u", "10.0.0." + i, 8080, null, null, false, false, List.of());
      tracked.add(new TrackedBackend(m, health.addNew(m.id()), 0));
    }
    SplittableRandom random = new SplittableRandom(37);
    long now = 1_000;
    int marked = 0;
    Set<String> seen = new HashSet<>();
    for (int step = 0; step < 5_000; step++) {
      now += random.nextInt(500);
      TrackedBackend t = tracked.get(random.nextInt(tracked.size()));
      Backend b = t.backend;
      switch (random.nextInt(9)) {
        case 0, 1, 2 -> {
          boolean ok = random.nextInt(3) > 0;
          t.probed = true;
          t.probeOk = ok;
          t.probeAt = now;
          t.probeLatencyMs = random.nextInt(1_000);
          t.probeDetail = ok ? "200" : "timeout";
          health.onProbeResult(b, ok, random.nextInt(20) == 0, now);
        }
        case 3, 4 -> health.onRequestOutcome(b, random.nextBoolean(), Origin.UPSTREAM, now);
        case 5 ->
            health.setHold(
                b,
                BackendHold.of(
                    AdminState.values()[random.nextInt(AdminState.values().length)],
                    AgentState.NONE));
        case 6 -> {
          if (random.nextBoolean()) {
            t.wouldEject("would eject: 2 errors", now + 3_000);
          } else {
            t.clearWouldEject();
          }
        }
        case 7 -> health.setDraining(b, random.nextInt(4) == 0);
        default -> {
          t.lastVotes(
              random.nextBoolean()
                  ? null
                  : new Confirmer.Votes(List.of("a"), List.of(), List.of()));
          health.sweep(now);
        }
      }
      health.expireEjections(now);
      health.releaseDamped(now);
      for (TrackedBackend each : tracked) {
        boolean published = random.nextBoolean();
        BackendSnapshot s = new BackendSnapshot(each, published, now);
        BackendView view = each.backend.view();
        assertEquals(view, s.decision(), "step " + step);
        assertEquals(each.backend.healthy(), s.healthy());
        assertEquals(published, s.published());
        assertEquals(
            each.probed
                ? new ProbeSummary(
                    each.probeAt, each.probeOk, each.probeLatencyMs, each.probeDetail)
                : null,
            s.lastProbe());
        assertEquals(each.wouldEject(), s.wouldEject());
        assertEquals(each.lastVotes(), s.votes());
        boolean expectMarks =
            !view.equals(
                    new BackendView(
                        view.id(),
                        view.state(),
                        view.passRun(),
                        view.failRun(),
                        0,
                        0,
                        0,
                        view.ejected(),
                        0,
                        view.draining(),
                        view.available(),
                        view.damped(),
                        0,
                        0,
                        0,
                        BackendHold.NONE))
                || each.wouldEject() != null
                || each.lastVotes() != null;
        assertEquals(expectMarks, s.marked(), "step " + step + ": " + s);
        marked += s.marked() ? 1 : 0;
        if (view.ejected()) {
          seen.add("ejected");
        }
        if (view.damped()) {
          seen.add("damped");
        }
        if (view.draining()) {
          seen.add("draining");
        }
        if (view.available()) {
          seen.add("available");
        }
        if (view.state() == ActiveState.DOWN) {
          seen.add("down");
        }
        if (s.healthy()) {
          seen.add("healthy");
        }
      }
    }
    assertTrue(marked > 0, "the events never marked a backend");
    assertEquals(
        Set.of("ejected", "damped", "draining", "available", "down", "healthy"),
        seen,
        "the events reach every state the snapshot packs");
  }
}
