package dev.vigil.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.marcnuri.helm.LintResult;
import org.junit.jupiter.api.Test;

class ChartLintTest {

  @Test
  void lintsWithoutErrorsOrWarningsInStrictMode() {
    LintResult result = VigilChart.locate().lint();

    assertThat(result.isFailed()).as("helm lint --strict: %s", result.getMessages()).isFalse();
    assertThat(result.getMessages())
        .noneMatch(m -> m.startsWith("[ERROR]") || m.startsWith("[WARNING]"));
  }
}
