package dev.vigil.publish;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.api.v1alpha1.BackendPoolStatus;
import dev.vigil.api.v1alpha1.HealthPolicyStatus;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class PolicyStatusAggregatorTest {
  private static BackendPoolStatus pool(int total, int available, boolean panic) {
    BackendPoolStatus s = new BackendPoolStatus();
    s.setTotal(total);
    s.setAvailable(available);
    s.setPanic(panic);
    return s;
  }

  @Test
  void shardedReplicasAggregateThePoolsStatusesAlike() {
    List<BackendPoolStatus> pools =
        Arrays.asList(pool(4, 3, false), pool(2, 0, true), null /* not yet written */);
    HealthPolicyStatus one = PolicyStatusAggregator.fromPoolStatuses(1L, null, pools, null, 1_000);
    HealthPolicyStatus other = PolicyStatusAggregator.fromPoolStatuses(1L, null, pools, one, 9_000);
    assertThat(one.getPools()).isEqualTo(3);
    assertThat(one.getBackends()).isEqualTo(6);
    assertThat(one.getAvailable()).isEqualTo(3);
    assertThat(one.getPanicking()).isEqualTo(1);
    assertThat(one.getAvailability()).isEqualTo("3/6");
    assertThat(StatusWriter.materiallyEqual(one, other))
        .as("another replica, later, computes the same status: nothing to write")
        .isTrue();
  }
}
