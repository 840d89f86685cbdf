package dev.vigil.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.health.Ejection;
import dev.vigil.health.EjectionDecision;
import dev.vigil.health.EjectionDecision.Kind;
import dev.vigil.health.HealthSettings;
import dev.vigil.health.Origin;
import org.junit.jupiter.api.Test;

/**
 * The reasons status, Events and docs quote (docs/decision.md, docs/passive.md), byte for byte: a
 * decision carries its reason, so no caller composes one.
 */
class EjectionNoticeTest {
  private static final HealthSettings SETTINGS =
      HealthSettings.builder()
          .consecutiveErrors(5)
          .consecutiveLocalOriginErrors(3)
          .splitLocalOrigin(true)
          .windowFailures(4)
          .failureWindowMs(10_000)
          .build();

  @Test
  void aRunOfErrorsNamesItsThresholdAndOrigin() {
    EjectionDecision ejected = new EjectionDecision(Kind.EJECTED, 9_000);
    assertThat(EjectionNotice.of(ejected, Origin.UPSTREAM, SETTINGS).reason())
        .isEqualTo("5 consecutive errors");
    assertThat(EjectionNotice.of(ejected, Origin.LOCAL, SETTINGS).reason())
        .isEqualTo("3 consecutive local-origin errors");
    assertThat(
            EjectionNotice.of(
                    ejected, Origin.LOCAL, SETTINGS.toBuilder().splitLocalOrigin(false).build())
                .reason())
        .as("local-origin errors counted with the rest")
        .isEqualTo("5 consecutive errors");
  }

  @Test
  void theWindowRuleNamesItsWindowInSecondsOrMilliseconds() {
    EjectionDecision byWindow = new EjectionDecision(Kind.EJECTED, 9_000, true);
    assertThat(EjectionNotice.of(byWindow, Origin.UPSTREAM, SETTINGS).reason())
        .isEqualTo("4 errors within 10s (passive.windowFailures)");
    assertThat(
            EjectionNotice.of(
                    byWindow, Origin.UPSTREAM, SETTINGS.toBuilder().failureWindowMs(2_500).build())
                .reason())
        .isEqualTo("4 errors within 2500ms (passive.windowFailures)");
  }

  @Test
  void aDryRunSaysWhichSwitchMadeItOne() {
    EjectionNotice outcome =
        EjectionNotice.of(new EjectionDecision(Kind.WOULD_EJECT, 9_000), Origin.UPSTREAM, SETTINGS);
    assertThat(outcome.dryRunReason())
        .isEqualTo("5 consecutive errors (dry run: passive.enforce is false)");
    assertThat(outcome.ejectedUntil()).isEqualTo(9_000);

    EjectionNotice sweep =
        EjectionNotice.of(
            new Ejection(
                "a",
                Ejection.Rule.SUCCESS_RATE,
                Kind.WOULD_EJECT,
                7_000,
                "success rate 62% < 90%"));
    assertThat(sweep.reason()).isEqualTo("success rate 62% < 90%");
    assertThat(sweep.dryRunReason()).isEqualTo("success rate 62% < 90% (dry run)");
    assertThat(sweep.kind()).isEqualTo(Kind.WOULD_EJECT);
  }
}
