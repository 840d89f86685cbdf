package dev.vigil.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class OperatorLogTest {
  @Test
  void aRefusedRequestIsFoundAndATimesMillisecondsAreNot() {
    assertThat(OperatorLog.isForbidden("PATCH backendpools: 403 Forbidden")).isTrue();
    assertThat(OperatorLog.isForbidden("Failure executing: GET at: https://x. Message: forbidden"))
        .isTrue();
    assertThat(OperatorLog.isForbidden("code=403 reason=Forbidden")).isTrue();
    assertThat(OperatorLog.isForbidden("User cannot list resource pods")).isTrue();
    assertThat(
            OperatorLog.isForbidden(
                "18:43:49.403 INFO  Default ConfigurationService implementation - Created"
                    + " configuration for reconciler BackendPoolReconciler"))
        .isFalse();
    assertThat(OperatorLog.isForbidden("2026-12-01T18:43:49,403 INFO started")).isFalse();
  }
}
