package dev.vigil.ops;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Which leader a standby forwards outcomes to, from the leader Lease alone (docs/passive.md,
 * "Routing between replicas"): the address counts only on a live Lease whose holder wrote it, and
 * the holder writes it only while it is missing or another's.
 */
class LeaderAddressTest {
  private static final long NOW = 1_000_000_000L;

  /** A Lease of 15 s held by {@code holder}, renewed {@code agoMs} before {@link #NOW}. */
  private static Lease lease(String holder, long agoMs, Map<String, String> annotations) {
    return new LeaseBuilder()
        .withNewMetadata()
        .withName("vigil")
        .withNamespace("vigil-system")
        .withAnnotations(annotations.isEmpty() ? null : new HashMap<>(annotations))
        .endMetadata()
        .withNewSpec()
        .withHolderIdentity(holder)
        .withLeaseDurationSeconds(15)
        .withRenewTime(Instant.ofEpochMilli(NOW - agoMs).atZone(ZoneOffset.UTC))
        .endSpec()
        .build();
  }

  private static Map<String, String> written(String holder, String address) {
    return Map.of(LeaderAddress.HOLDER, holder, LeaderAddress.ADDRESS, address);
  }

  @Test
  void aStandbyFindsTheLeaderAtTheAddressItWroteOnItsLiveLease() {
    Lease l = lease("vigil-a", 1_000, written("vigil-a", "10.0.0.7:8443"));
    assertThat(LeaderAddress.elsewhere(l, "vigil-b", NOW)).isEqualTo("10.0.0.7:8443");
  }

  @Test
  void aNewLeaderIsNotLookedForAtTheAddressItsPredecessorWrote() {
    Lease l = lease("vigil-b", 1_000, written("vigil-a", "10.0.0.7:8443"));
    assertThat(LeaderAddress.elsewhere(l, "vigil-c", NOW)).isEmpty();
  }

  @Test
  void anExpiredOrReleasedLeaseNamesNoLeader() {
    assertThat(
            LeaderAddress.elsewhere(
                lease("vigil-a", 15_000, written("vigil-a", "10.0.0.7:8443")), "vigil-b", NOW))
        .as("renewed a whole duration ago")
        .isEmpty();
    assertThat(
            LeaderAddress.elsewhere(
                lease("", 100, written("vigil-a", "10.0.0.7:8443")), "vigil-b", NOW))
        .as("released (holder cleared)")
        .isEmpty();
    assertThat(LeaderAddress.elsewhere(null, "vigil-b", NOW)).as("no Lease").isEmpty();
  }

  @Test
  void theLeaderDoesNotForwardToItself() {
    Lease l = lease("vigil-a", 1_000, written("vigil-a", "10.0.0.7:8443"));
    assertThat(LeaderAddress.elsewhere(l, "vigil-a", NOW)).isEmpty();
  }

  @Test
  void theHolderWritesItsAddressOnlyWhileTheLeaseLacksIt() {
    String mine = "10.0.0.8:8443";
    assertThat(LeaderAddress.due(lease("vigil-b", 0, Map.of()), "vigil-b", mine))
        .as("no address yet")
        .isTrue();
    assertThat(
            LeaderAddress.due(
                lease("vigil-b", 0, written("vigil-a", "10.0.0.7:8443")), "vigil-b", mine))
        .as("the predecessor's address")
        .isTrue();
    assertThat(LeaderAddress.due(lease("vigil-b", 0, written("vigil-b", mine)), "vigil-b", mine))
        .as("its own, written")
        .isFalse();
    assertThat(LeaderAddress.due(lease("vigil-a", 0, Map.of()), "vigil-b", mine))
        .as("another replica holds the Lease")
        .isFalse();
    assertThat(LeaderAddress.due(lease("vigil-b", 0, Map.of()), "vigil-b", ""))
        .as("no address of its own to write")
        .isFalse();
  }
}
