package dev.vigil.demo;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.api.v1alpha1.BackendPoolStatus;
import dev.vigil.api.v1alpha1.BackendState;
import dev.vigil.api.v1alpha1.BackendStatus;
import dev.vigil.health.AvailabilitySnapshot;
import dev.vigil.health.BackendView;
import dev.vigil.runtime.BackendSnapshot;
import dev.vigil.runtime.Member;
import dev.vigil.runtime.PoolView;
import dev.vigil.testing.Fixtures;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The demo's final print waits for {@link Observation#settled()}: status, slices and runtime agree.
 */
class ObservationTest {
  private static final AvailabilitySnapshot.Counts COUNTS =
      new AvailabilitySnapshot.Counts(1, 1, 1, 0, 0, 0, 0, 1, 0);

  /** Backend web-0 at 10.0.0.1, Up and published by the runtime. */
  private static PoolView upView() {
    BackendView up = Fixtures.upBackend("web-0");
    return new PoolView(
        new AvailabilitySnapshot(1, false, Set.of("web-0"), Set.of("web-0"), Set.of(), COUNTS),
        List.of(
            new BackendSnapshot(
                Member.of("web-0", "u", "10.0.0.1", 8080, null, null, false, false, List.of()),
                up,
                true,
                true,
                0,
                null,
                null,
                null,
                List.of())));
  }

  private static BackendPool statusSays(BackendState state) {
    BackendStatus b = new BackendStatus();
    b.setPod("web-0");
    b.setState(state);
    BackendPoolStatus s = new BackendPoolStatus();
    s.setBackends(List.of(b));
    BackendPool pool = new BackendPool();
    pool.setStatus(s);
    return pool;
  }

  private static Observation seen(Map<String, Boolean> slice, BackendState status) {
    return new Observation(0, slice, statusSays(status), List.of(), upView(), 0);
  }

  @Test
  void notSettledWhileStatusStillShowsDownAndTheSliceAlreadyReady() {
    assertThat(seen(Map.of("10.0.0.1", true), BackendState.DOWN).settled()).isFalse();
  }

  @Test
  void notSettledWhileTheSliceLagsTheRuntime() {
    assertThat(seen(Map.of("10.0.0.1", false), BackendState.UP).settled()).isFalse();
  }

  @Test
  void settledWhenAllThreeAgree() {
    assertThat(seen(Map.of("10.0.0.1", true), BackendState.UP).settled()).isTrue();
  }
}
