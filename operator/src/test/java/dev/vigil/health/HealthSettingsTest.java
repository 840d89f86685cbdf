package dev.vigil.health;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class HealthSettingsTest {

  @Test
  void defaultsAreThoseOfTheDesign() {
    HealthSettings s = HealthSettings.defaults();
    assertThat(s.intervalMs()).isEqualTo(5_000);
    assertThat(s.timeoutMs()).isEqualTo(2_000);
    assertThat(s.jitterPercent()).isEqualTo(10);
    assertThat(s.rise()).isEqualTo(2);
    assertThat(s.fall()).isEqualTo(3);
    assertThat(s.consecutiveErrors()).isEqualTo(5);
    assertThat(s.consecutiveLocalOriginErrors()).isEqualTo(5);
    assertThat(s.splitLocalOrigin()).isTrue();
    assertThat(s.baseEjectionTimeMs()).isEqualTo(30_000);
    assertThat(s.maxEjectionTimeMs()).isEqualTo(300_000);
    assertThat(s.maxEjectionPercent()).isEqualTo(10);
    assertThat(s.alwaysEjectOne()).isFalse();
    assertThat(s.sweepIntervalMs()).isEqualTo(10_000);
    assertThat(s.unejectOnActivePass()).isFalse();
    assertThat(s.enforce()).isTrue();
    assertThat(s.panicThresholdPercent()).isEqualTo(50);
    assertThat(s.panicExitPercent()).isEqualTo(50);
  }

  @Test
  void panicExitDefaultsToTheThreshold() {
    assertThat(HealthSettings.builder().panicThresholdPercent(30).build().panicExitPercent())
        .isEqualTo(30);
  }

  @Test
  void toBuilderRoundTripsAndLetsTheThresholdMoveWhenExitWasDefaulted() {
    HealthSettings s = HealthSettings.builder().rise(7).panicExitPercent(60).build();
    assertThat(s.toBuilder().build()).isEqualTo(s);
    HealthSettings d = HealthSettings.defaults().toBuilder().panicThresholdPercent(70).build();
    assertThat(d.panicExitPercent()).isEqualTo(70);
  }

  static Stream<Arguments> invalid() {
    return Stream.of(
        bad("active.interval", b -> b.intervalMs(99)),
        bad("active.maxInterval", b -> b.intervalMs(5_000).maxIntervalMs(4_999L)),
        bad("active.quietMinRequests", b -> b.quietMinRequests(101)),
        bad("active.quietMinRequests", b -> b.quietMinRequests(-1)),
        bad("active.timeout", b -> b.timeoutMs(0)),
        bad("active.timeout", b -> b.intervalMs(1_000).timeoutMs(1_000)),
        bad("active.timeout", b -> b.intervalMs(1_000).timeoutMs(5_000)),
        bad("active.jitterPercent", b -> b.jitterPercent(51)),
        bad("active.jitterPercent", b -> b.jitterPercent(-1)),
        bad("active.rise", b -> b.rise(0)),
        bad("active.rise", b -> b.rise(101)),
        bad("active.fall", b -> b.fall(0)),
        bad("passive.consecutiveErrors", b -> b.consecutiveErrors(-1)),
        bad("passive.consecutiveErrors", b -> b.consecutiveErrors(1001)),
        bad("passive.consecutiveLocalOriginErrors", b -> b.consecutiveLocalOriginErrors(1001)),
        bad("passive.baseEjectionTime", b -> b.baseEjectionTimeMs(0)),
        bad("passive.maxEjectionTime", b -> b.maxEjectionTimeMs(29_999)),
        bad("passive.maxEjectionPercent", b -> b.maxEjectionPercent(101)),
        bad("passive.maxEjectionPercent", b -> b.maxEjectionPercent(-1)),
        bad("passive.sweepInterval", b -> b.sweepIntervalMs(0)),
        bad("panicThresholdPercent", b -> b.panicThresholdPercent(101)),
        bad("panicThresholdPercent", b -> b.panicThresholdPercent(-1)),
        bad("panicExitPercent", b -> b.panicThresholdPercent(50).panicExitPercent(49)),
        bad("panicExitPercent", b -> b.panicExitPercent(101)),
        bad("passive.successRate.minimumHosts", b -> b.successRate(sr(0, 100, 1.9))),
        bad("passive.successRate.requestVolume", b -> b.successRate(sr(5, 0, 1.9))),
        bad("passive.successRate.stdevFactor", b -> b.successRate(sr(5, 100, 0))),
        bad("passive.successRate.stdevFactor", b -> b.successRate(sr(5, 100, 10.5))),
        bad("passive.successRate.stdevFactor", b -> b.successRate(sr(5, 100, Double.NaN))),
        bad("passive.failurePercentage.threshold", b -> b.failurePercentage(fp(101, 5, 50))),
        bad("passive.failurePercentage.threshold", b -> b.failurePercentage(fp(-1, 5, 50))),
        bad("passive.failurePercentage.minimumHosts", b -> b.failurePercentage(fp(85, 0, 50))),
        bad("passive.failurePercentage.requestVolume", b -> b.failurePercentage(fp(85, 5, 0))),
        bad(
            "passive.latency.factor",
            b -> b.latency(new HealthSettings.Latency(0.5, 20, 200, true))),
        bad(
            "passive.latency.factor",
            b -> b.latency(new HealthSettings.Latency(101, 20, 200, true))),
        bad(
            "passive.latency.minimumSamples",
            b -> b.latency(new HealthSettings.Latency(3, 0, 200, true))),
        bad("passive.latency.floor", b -> b.latency(new HealthSettings.Latency(3, 20, -1, true))),
        bad(
            "passive.latency.minimumHosts",
            b -> b.latency(new HealthSettings.Latency(3, 0, 20, 200, true))),
        bad("quorum.confirmers", b -> b.quorum(new QuorumSettings(0, 50, 1_000))),
        bad("quorum.confirmers", b -> b.quorum(new QuorumSettings(6, 50, 1_000))),
        bad("quorum.downPercent", b -> b.quorum(new QuorumSettings(2, 100, 1_000))),
        bad("quorum.downPercent", b -> b.quorum(new QuorumSettings(2, -1, 1_000))),
        bad("quorum.timeout", b -> b.quorum(new QuorumSettings(2, 50, 0))),
        bad("quorum.downPercent", b -> b.quorum(2, 100, null)));
  }

  private static HealthSettings.SuccessRate sr(int hosts, int volume, double factor) {
    return new HealthSettings.SuccessRate(hosts, volume, factor, true);
  }

  private static HealthSettings.FailurePercentage fp(int threshold, int hosts, int volume) {
    return new HealthSettings.FailurePercentage(threshold, hosts, volume, true);
  }

  @Test
  void statisticalRulesAreOffByDefaultAndCarryTheCrdDefaults() {
    HealthSettings s = HealthSettings.defaults();
    assertThat(s.successRate()).isNull();
    assertThat(s.failurePercentage()).isNull();
    assertThat(s.latency()).isNull();
    assertThat(s.detectsOutliers()).isFalse();
    assertThat(HealthSettings.SuccessRate.defaults())
        .isEqualTo(new HealthSettings.SuccessRate(5, 100, 1.9, true));
    assertThat(HealthSettings.FailurePercentage.defaults())
        .isEqualTo(new HealthSettings.FailurePercentage(85, 5, 50, true));
    assertThat(HealthSettings.Latency.defaults())
        .isEqualTo(new HealthSettings.Latency(3.0, 5, 20, 200, true));
  }

  @Test
  void aRuleEjectsOnlyWhenBothEnforceFlagsAreTrue() {
    assertThat(HealthSettings.defaults().enforces(true)).isTrue();
    assertThat(HealthSettings.defaults().enforces(false)).isFalse();
    assertThat(HealthSettings.builder().enforce(false).build().enforces(true)).isFalse();
  }

  @Test
  void rulesRoundTripThroughToBuilder() {
    HealthSettings s =
        HealthSettings.builder()
            .successRate(HealthSettings.SuccessRate.defaults())
            .failurePercentage(HealthSettings.FailurePercentage.defaults())
            .latency(HealthSettings.Latency.defaults())
            .build();
    assertThat(s.toBuilder().build()).isEqualTo(s);
    assertThat(s.detectsOutliers()).isTrue();
  }

  @Test
  void rejectsALatencyFloorWithAReadableMessage() {
    assertThatThrownBy(() -> new HealthSettings.Latency(3, 20, -5, true))
        .hasMessage("passive.latency.floor: must be at least 0ms, was -5ms");
  }

  private static Arguments bad(String field, UnaryOperator<HealthSettingsBuilder> change) {
    return Arguments.of(field, change);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("invalid")
  void rejectsAnInvalidValueNamingTheField(
      String field, UnaryOperator<HealthSettingsBuilder> change) {
    assertThatThrownBy(() -> change.apply(HealthSettings.builder()).build())
        .isInstanceOfSatisfying(
            InvalidSettingsException.class, e -> assertThat(e.field()).isEqualTo(field))
        .hasMessageStartingWith(field + ": ");
  }

  @Test
  void quorumIsOffByDefaultAndItsTimeoutDefaultsToIntervalTimesFallPlusTimeout() {
    assertThat(HealthSettings.defaults().quorum()).isNull();
    assertThat(HealthSettings.defaults().quorumOn()).isFalse();

    HealthSettings s =
        HealthSettings.builder()
            .intervalMs(2_000)
            .fall(4)
            .timeoutMs(500)
            .quorum(3, 60, null)
            .build();
    assertThat(s.quorum()).isEqualTo(new QuorumSettings(3, 60, 8_500));
    assertThat(s.quorumOn()).isTrue();
    assertThat(s.quorum().confirmation()).isEqualTo(Confirmation.vote(60));

    // computed at build(), whatever order the builder was called in
    HealthSettings late =
        HealthSettings.builder()
            .quorum(2, 50, null)
            .intervalMs(1_000)
            .fall(2)
            .timeoutMs(300)
            .build();
    assertThat(late.quorum().timeoutMs()).isEqualTo(2_300);

    HealthSettings given = HealthSettings.builder().quorum(new QuorumSettings(1, 0, 9)).build();
    assertThat(given.quorum()).isEqualTo(new QuorumSettings(1, 0, 9));
  }

  @Test
  void aSuspectOwnerUsesThePolicysQuorumOrEveryDefault() {
    assertThat(HealthSettings.defaults().suspectQuorum())
        .isEqualTo(new QuorumSettings(2, 50, 5_000 * 3 + 2_000));
    HealthSettings own = HealthSettings.builder().quorum(new QuorumSettings(4, 75, 1_234)).build();
    assertThat(own.suspectQuorum()).isEqualTo(own.quorum());
  }

  @Test
  void theQuorumTakesPartInEqualityAndToStringAndRoundTripsThroughToBuilder() {
    HealthSettings off = HealthSettings.defaults();
    HealthSettings on = HealthSettings.builder().quorum(2, 50, null).build();
    assertThat(on).isNotEqualTo(off);
    assertThat(on).isEqualTo(HealthSettings.builder().quorum(2, 50, null).build());
    assertThat(on.hashCode())
        .isEqualTo(HealthSettings.builder().quorum(2, 50, null).build().hashCode());
    assertThat(on.toString()).contains("quorum=QuorumSettings[confirmers=2, downPercent=50");
    assertThat(HealthSettings.builder().quorum(2, 40, null).build()).isNotEqualTo(on);

    assertThat(on.toBuilder().build()).isEqualTo(on);
    assertThat(off.toBuilder().build()).isEqualTo(off);
    // a computed timeout follows a later change of the interval; a given one stays
    assertThat(on.toBuilder().intervalMs(10_000).build().quorum().timeoutMs())
        .isEqualTo(10_000 * 3 + 2_000);
    HealthSettings given =
        HealthSettings.builder().quorum(new QuorumSettings(2, 50, 7_000)).build();
    assertThat(given.toBuilder().build()).isEqualTo(given);
    assertThat(given.toBuilder().intervalMs(10_000).build().quorum().timeoutMs()).isEqualTo(7_000);
  }

  @Test
  void acceptsTheEdgesOfTheQuorumRanges() {
    assertThat(HealthSettings.builder().quorum(new QuorumSettings(1, 0, 1)).build().quorum())
        .isEqualTo(new QuorumSettings(1, 0, 1));
    assertThat(HealthSettings.builder().quorum(new QuorumSettings(5, 99, 1)).build().quorum())
        .isEqualTo(new QuorumSettings(5, 99, 1));
  }

  @Test
  void rejectsADownPercentOf100WithAReadableMessage() {
    assertThatThrownBy(() -> new QuorumSettings(2, 100, 1_000))
        .hasMessage(
            "quorum.downPercent: must be between 0 and 99 (at 100 no Down could be confirmed),"
                + " was 100");
    assertThatThrownBy(() -> new QuorumSettings(2, 50, 0))
        .hasMessage("quorum.timeout: must be at least 1ms, was 0ms");
  }

  @Test
  void rejectsRiseZeroWithAReadableMessage() {
    assertThatThrownBy(() -> HealthSettings.builder().rise(0).build())
        .hasMessage("active.rise: must be between 1 and 100, was 0");
  }

  @Test
  void rejectsTimeoutNotBelowIntervalWithAReadableMessage() {
    assertThatThrownBy(() -> HealthSettings.builder().intervalMs(1_000).timeoutMs(1_000).build())
        .hasMessage("active.timeout: must be below active.interval (1000ms), was 1000ms");
  }

  @Test
  void acceptsTheEdgesOfEveryRange() {
    HealthSettings low =
        HealthSettings.builder()
            .intervalMs(100)
            .timeoutMs(1)
            .jitterPercent(0)
            .rise(1)
            .fall(1)
            .consecutiveErrors(0)
            .consecutiveLocalOriginErrors(0)
            .baseEjectionTimeMs(1)
            .maxEjectionTimeMs(1)
            .maxEjectionPercent(0)
            .sweepIntervalMs(1)
            .panicThresholdPercent(0)
            .panicExitPercent(0)
            .build();
    assertThat(low)
        .extracting(
            HealthSettings::intervalMs,
            HealthSettings::timeoutMs,
            HealthSettings::jitterPercent,
            HealthSettings::rise,
            HealthSettings::fall,
            HealthSettings::consecutiveErrors,
            HealthSettings::consecutiveLocalOriginErrors,
            HealthSettings::baseEjectionTimeMs,
            HealthSettings::maxEjectionTimeMs,
            HealthSettings::maxEjectionPercent,
            HealthSettings::sweepIntervalMs,
            HealthSettings::panicThresholdPercent,
            HealthSettings::panicExitPercent)
        .containsExactly(100L, 1L, 0, 1, 1, 0, 0, 1L, 1L, 0, 1L, 0, 0);
    assertThat(low.panicEnabled()).isFalse();

    HealthSettings high =
        HealthSettings.builder()
            .intervalMs(100)
            .timeoutMs(99)
            .jitterPercent(50)
            .rise(100)
            .fall(100)
            .consecutiveErrors(1000)
            .consecutiveLocalOriginErrors(1000)
            .baseEjectionTimeMs(1)
            .maxEjectionTimeMs(86_400_000)
            .maxEjectionPercent(100)
            .panicThresholdPercent(100)
            .panicExitPercent(100)
            .build();
    assertThat(high)
        .extracting(
            HealthSettings::intervalMs,
            HealthSettings::timeoutMs,
            HealthSettings::jitterPercent,
            HealthSettings::rise,
            HealthSettings::fall,
            HealthSettings::consecutiveErrors,
            HealthSettings::consecutiveLocalOriginErrors,
            HealthSettings::baseEjectionTimeMs,
            HealthSettings::maxEjectionTimeMs,
            HealthSettings::maxEjectionPercent,
            HealthSettings::panicThresholdPercent,
            HealthSettings::panicExitPercent)
        .containsExactly(100L, 99L, 50, 100, 100, 1000, 1000, 1L, 86_400_000L, 100, 100, 100);
    assertThat(high.panicEnabled()).isTrue();
  }
}
