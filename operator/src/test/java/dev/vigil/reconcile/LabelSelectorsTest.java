package dev.vigil.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import java.util.Map;
import org.junit.jupiter.api.Test;

class LabelSelectorsTest {
  @Test
  void matchLabelsMustAllBePresentWithEqualValues() {
    LabelSelector s =
        new LabelSelectorBuilder().withMatchLabels(Map.of("app", "web", "tier", "fe")).build();
    assertThat(LabelSelectors.matches(s, Map.of("app", "web", "tier", "fe", "x", "y"))).isTrue();
    assertThat(LabelSelectors.matches(s, Map.of("app", "web"))).isFalse();
    assertThat(LabelSelectors.matches(s, Map.of("app", "web", "tier", "be"))).isFalse();
  }

  @Test
  void expressionsFollowTheApiServerOperators() {
    LabelSelector s =
        new LabelSelectorBuilder()
            .addNewMatchExpression()
            .withKey("app")
            .withOperator("In")
            .withValues("web", "api")
            .endMatchExpression()
            .addNewMatchExpression()
            .withKey("canary")
            .withOperator("DoesNotExist")
            .endMatchExpression()
            .addNewMatchExpression()
            .withKey("zone")
            .withOperator("NotIn")
            .withValues("z9")
            .endMatchExpression()
            .addNewMatchExpression()
            .withKey("team")
            .withOperator("Exists")
            .endMatchExpression()
            .build();
    assertThat(LabelSelectors.matches(s, Map.of("app", "api", "team", "a"))).isTrue();
    assertThat(LabelSelectors.matches(s, Map.of("app", "api", "team", "a", "canary", "1")))
        .isFalse();
    assertThat(LabelSelectors.matches(s, Map.of("app", "db", "team", "a"))).isFalse();
    assertThat(LabelSelectors.matches(s, Map.of("app", "web", "team", "a", "zone", "z9")))
        .isFalse();
    assertThat(LabelSelectors.matches(s, Map.of("app", "web"))).isFalse();
  }

  @Test
  void emptySelectorMatchesAllAndNullMatchesNone() {
    assertThat(LabelSelectors.matches(new LabelSelector(), Map.of("a", "b"))).isTrue();
    assertThat(LabelSelectors.matches(null, Map.of("a", "b"))).isFalse();
  }
}
