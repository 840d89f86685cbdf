package dev.vigil.budget;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link ProbeBudget}'s order of classes and fairness, case by case. */
class ProbeBudgetTest {

  private static PoolDemand pool(String ns, int hot, int down, int quiet, int normal) {
    return new PoolDemand(
        ns, "p", new ClassCounts(hot, down, quiet, normal), 1000, 1000, 1000, 60_000);
  }

  @Test
  void nothingStretchesWithinTheBudget() {
    BudgetPlan plan = ProbeBudget.plan(100, List.of(pool("a", 10, 10, 10, 70)));
    assertThat(plan.stretches().get(0)).isEqualTo(ProbeStretch.NONE);
    assertThat(plan.exceeded()).isFalse();
  }

  @Test
  void quietStretchesBeforeNormalAndDown() {
    // 200/s asked of 150: quiet (100/s) gives up 50 alone
    BudgetPlan plan = ProbeBudget.plan(150, List.of(pool("a", 0, 50, 100, 50)));
    ProbeStretch s = plan.stretches().get(0);
    assertThat(s.quiet()).isCloseTo(2.0, within(1e-9));
    assertThat(s.normal()).isEqualTo(1.0);
    assertThat(s.down()).isEqualTo(1.0);
    assertThat(plan.planned()).isCloseTo(150, within(1e-9));
  }

  @Test
  void normalAndDownStretchAlikeOnceQuietIsAtMaxInterval() {
    // quiet at 60 s makes 100/60 a second; normal + down share what is left of 100
    BudgetPlan plan = ProbeBudget.plan(100, List.of(pool("a", 0, 100, 100, 100)));
    ProbeStretch s = plan.stretches().get(0);
    assertThat(s.quiet()).isEqualTo(60.0);
    assertThat(s.normal()).isEqualTo(s.down());
    assertThat(plan.planned()).isCloseTo(100, within(1e-9));
  }

  @Test
  void hotStretchesOnlyWhenEverythingElseIsAtMaxIntervalAndThePlanSaysExceeded() {
    BudgetPlan plan = ProbeBudget.plan(50, List.of(pool("a", 100, 0, 0, 600)));
    ProbeStretch s = plan.stretches().get(0);
    assertThat(s.normal()).isEqualTo(60.0);
    assertThat(s.hot()).isCloseTo(2.0, within(1e-9)); // D_hot / B
    assertThat(plan.exceeded()).isTrue();
  }

  @Test
  void aNamespaceWithTenTimesTheBackendsGetsNoMoreThanAnEqualShare() {
    PoolDemand big =
        new PoolDemand("big", "p", new ClassCounts(0, 0, 0, 1000), 100, 100, 100, 60_000);
    PoolDemand small =
        new PoolDemand("small", "p", new ClassCounts(0, 0, 0, 100), 100, 100, 100, 60_000);
    // 10,000/s and 1,000/s asked of 2,000: each namespace gets 1,000
    BudgetPlan plan = ProbeBudget.plan(2_000, List.of(big, small));
    assertThat(plan.stretches().get(1).normal()).isEqualTo(1.0);
    assertThat(plan.stretches().get(0).normal()).isCloseTo(10.0, within(1e-9));
  }

  @Test
  void poolsOfOneNamespaceShareItsPartFairly() {
    PoolDemand a =
        new PoolDemand("ns", "a", new ClassCounts(0, 0, 0, 300), 1000, 1000, 1000, 60_000);
    PoolDemand b =
        new PoolDemand("ns", "b", new ClassCounts(0, 0, 0, 50), 1000, 1000, 1000, 60_000);
    PoolDemand c =
        new PoolDemand("other", "c", new ClassCounts(0, 0, 0, 300), 1000, 1000, 1000, 60_000);
    // 300 for two namespaces: 150 each; within ns, b's 50 whole and a the other 100
    BudgetPlan plan = ProbeBudget.plan(300, List.of(a, b, c));
    assertThat(plan.stretches().get(0).normal()).isCloseTo(3.0, within(1e-9));
    assertThat(plan.stretches().get(1).normal()).isEqualTo(1.0);
    assertThat(plan.stretches().get(2).normal()).isCloseTo(2.0, within(1e-9));
  }

  @Test
  void aBudgetThatIsNotPositiveIsRefusedNamingTheFlag() {
    assertThatThrownBy(() -> ProbeBudget.plan(0, List.of())).hasMessageContaining("--probe-budget");
  }

  @Test
  void detectionTimeIsTheLongestStretchedIntervalThenFallMinusOneHotIntervalsThenTheTimeout() {
    PoolDemand p = new PoolDemand("a", "p", new ClassCounts(0, 0, 5, 5), 500, 2000, 1000, 60_000);
    ProbeStretch s = new ProbeStretch(2, 1, 4, 3);
    // max(1000 x 4, 1000 x 3) + (3 - 1) x 500 x 2 + 300
    assertThat(DetectionTime.effectiveMs(p, s, 3, 300)).isEqualTo(4000 + 2000 + 300);
    assertThat(DetectionTime.wantedMs(p, 3, 300)).isEqualTo(1000 + 1000 + 300);
  }
}
