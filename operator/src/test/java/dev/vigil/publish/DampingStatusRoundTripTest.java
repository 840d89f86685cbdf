package dev.vigil.publish;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigil.api.v1alpha1.BackendPoolStatus;
import dev.vigil.api.v1alpha1.BackendState;
import dev.vigil.api.v1alpha1.BackendStatus;
import dev.vigil.health.Backend;
import dev.vigil.health.BackendHold;
import dev.vigil.health.BackendView;
import dev.vigil.health.DampingSettings;
import dev.vigil.health.HealthSettings;
import dev.vigil.health.PoolHealth;
import dev.vigil.reconcile.RestoreFromStatus;
import dev.vigil.runtime.BackendSnapshot;
import dev.vigil.runtime.Member;
import dev.vigil.runtime.PoolView;
import dev.vigil.runtime.RestoredBackend;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Flap damping through status (docs/design.md §2.1): the state shown with its precedence, the merit
 * and the release time published, and a restart that restores them so it never releases early.
 */
class DampingStatusRoundTripTest {
  private static final long T0 = 1_700_000_000_000L;
  private static final HealthSettings SETTINGS =
      HealthSettings.builder()
          .rise(1)
          .fall(1)
          .panicThresholdPercent(0)
          .damping(DampingSettings.defaults())
          .build();

  private final PoolHealth pool = new PoolHealth(SETTINGS);

  private Backend flapped(String id, String results) {
    Backend b = pool.add(id);
    long t = T0;
    pool.onProbeResult(b, true, t);
    for (char c : results.toCharArray()) {
      pool.onProbeResult(b, c == 'P', t += 1_000);
    }
    return b;
  }

  private BackendPoolStatus published(long now) throws Exception {
    List<BackendSnapshot> backends = new ArrayList<>();
    for (BackendView v : pool.views()) {
      backends.add(
          new BackendSnapshot(
              Member.of(
                  v.id(), "uid-" + v.id(), "10.0.0.1", 8080, "n1", null, false, false, List.of()),
              v,
              v.available(),
              v.available(),
              T0,
              null,
              null,
              null,
              List.of()));
    }
    PoolView view = new PoolView(pool.snapshot(), backends);
    BackendPoolStatus status = PoolStatusAggregator.build(1L, "p", view, null, null, now);
    ObjectMapper json = new ObjectMapper();
    return json.readValue(json.writeValueAsString(status), BackendPoolStatus.class);
  }

  private static BackendStatus entry(BackendPoolStatus s, String pod) {
    return s.getBackends().stream().filter(b -> b.getPod().equals(pod)).findFirst().orElseThrow();
  }

  @Test
  void statusShowsDampedWithItsMeritAndReleaseTimeAndDownBeforeDamped() throws Exception {
    Backend up = flapped("up", "FPFP");
    Backend down = flapped("down", "FPFPF");
    flapped("calm", "");
    assertThat(up.damped()).isTrue();
    assertThat(down.damped()).isTrue();
    BackendPoolStatus s = published(T0 + 10_000);

    BackendStatus u = entry(s, "up");
    assertThat(u.getState()).isEqualTo(BackendState.DAMPED);
    assertThat(u.getAvailable()).isFalse();
    assertThat(u.getMerit()).isEqualTo(up.merit());
    assertThat(u.getMeritTime()).isEqualTo(java.time.Instant.ofEpochMilli(up.meritAt()).toString());
    assertThat(u.getDampedUntil())
        .isEqualTo(java.time.Instant.ofEpochMilli(up.releaseAt()).toString());
    assertThat(entry(s, "down").getState()).as("Down > Damped").isEqualTo(BackendState.DOWN);
    assertThat(entry(s, "down").getDampedUntil()).isNotNull();
    assertThat(entry(s, "calm").getState()).isEqualTo(BackendState.UP);
    assertThat(entry(s, "calm").getMerit()).isNull();
    assertThat(s.getBackends().get(s.getBackends().size() - 1).getPod())
        .as("unavailable first")
        .isEqualTo("calm");
  }

  @Test
  void ejectedShowsBeforeDamped() {
    BackendView v =
        new BackendView(
            "a",
            dev.vigil.health.ActiveState.UP,
            0,
            0,
            0,
            0,
            1,
            true,
            T0,
            false,
            false,
            true,
            4_000,
            T0,
            T0 + 1,
            BackendHold.NONE);
    assertThat(PoolStatusAggregator.stateOf(v)).isEqualTo(BackendState.EJECTED);
  }

  @Test
  void aRestartRestoresDampingSoNothingIsReleasedEarly() throws Exception {
    Backend up = flapped("up", "FPFP");
    Backend down = flapped("down", "FPFPF");
    long release = up.releaseAt();
    long restartAt = T0 + 30_000;
    BackendPoolStatus s = published(restartAt);

    Map<String, RestoredBackend> restored = RestoreFromStatus.restore(s, List.of(), restartAt);
    assertThat(restored.get("up").damping().damped()).isTrue();
    assertThat(restored.get("up").state()).isEqualTo(dev.vigil.health.ActiveState.UP);

    PoolHealth restarted = new PoolHealth(SETTINGS);
    for (String id : List.of("up", "down")) {
      RestoredBackend r = restored.get(id);
      restarted.restore(
          restarted.add(id), r.state(), r.ejections(), r.ejectedUntil(), r.damping(), restartAt);
    }
    Backend again = restarted.backend("up");
    assertThat(again.damped()).isTrue();
    assertThat(again.releaseAt()).isEqualTo(release);
    assertThat(again.merit()).isEqualTo(up.merit());
    assertThat(restarted.backend("down").damped()).isTrue();
    assertThat(restarted.backend("down").releaseAt()).isEqualTo(down.releaseAt());
    assertThat(restarted.snapshot().available()).isEmpty();
    restarted.releaseDamped(release - 1);
    assertThat(again.available()).isFalse();
    restarted.releaseDamped(release);
    assertThat(again.available()).isTrue();
  }

  @Test
  void withoutMeritInStatusNothingIsRestoredAsDamped() throws Exception {
    flapped("calm", "F");
    BackendPoolStatus s = published(T0 + 5_000);
    RestoredBackend r = RestoreFromStatus.restore(s, List.of(), T0 + 5_000).get("calm");
    assertThat(r.damping().damped()).isFalse();
    assertThat(r.damping().merit()).isEqualTo(1_000);
  }
}
