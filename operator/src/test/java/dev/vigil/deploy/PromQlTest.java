package dev.vigil.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigil.deploy.PromQl.LabelUse;
import dev.vigil.deploy.PromQl.Matcher;
import dev.vigil.deploy.PromQl.References;
import dev.vigil.deploy.PromQl.Selector;
import java.util.List;
import org.junit.jupiter.api.Test;

class PromQlTest {

  @Test
  void findsSelectorsWithTheirMatchersInsideFunctionsAndRanges() {
    References refs =
        PromQl.parse(
            "histogram_quantile(0.99, sum by (le, protocol)"
                + " (rate(vigil_probe_duration_seconds_bucket{job=~\"$job\", result=\"fail\"}[2m])))");
    assertThat(refs.selectors())
        .containsExactly(
            new Selector(
                "vigil_probe_duration_seconds_bucket",
                List.of(new Matcher("job", "=~", "$job"), new Matcher("result", "=", "fail"))));
    assertThat(refs.labels())
        .extracting(LabelUse::label, LabelUse::clause)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple("le", "sum by"),
            org.assertj.core.groups.Tuple.tuple("protocol", "sum by"));
  }

  @Test
  void scopesAGroupingToTheSelectorsOfItsOwnAggregationOnly() {
    References refs =
        PromQl.parse(
            "1 - max by (namespace, pool) (vigil_pool_available)"
                + " / sum by (namespace, pool) (max without (instance, pod) (vigil_backends))");
    assertThat(refs.labels())
        .filteredOn(u -> u.clause().equals("max by"))
        .allSatisfy(
            u ->
                assertThat(u.scope())
                    .extracting(Selector::metric)
                    .containsExactly("vigil_pool_available"));
    assertThat(refs.labels())
        .filteredOn(u -> u.clause().equals("max without"))
        .extracting(LabelUse::label)
        .containsExactly("instance", "pod");
  }

  @Test
  void readsGroupingAfterTheArgumentsVectorMatchingOffsetAndMultiLineRules() {
    References refs =
        PromQl.parse(
            """
            sum(rate(a_total[5m])) without (instance)
            / on (job) group_left (code)
            sum without (instance, pod) (b_total unless b_total offset 10m) > bool 0.1
            """);
    assertThat(refs.selectors())
        .extracting(Selector::metric)
        .containsExactly("a_total", "b_total", "b_total");
    assertThat(refs.labels())
        .filteredOn(u -> u.clause().equals("on group_left"))
        .extracting(LabelUse::label)
        .containsExactly("job", "code");
    assertThat(refs.labels())
        .filteredOn(u -> u.clause().startsWith("on"))
        .allSatisfy(u -> assertThat(u.scope()).hasSize(3));
  }

  @Test
  void readsAbsentOverAComparisonAndSubqueries() {
    assertThat(
            PromQl.parse("absent(up{job=\"vigil\",namespace=\"vigil-system\"} == 1)").selectors())
        .singleElement()
        .satisfies(s -> assertThat(s.matchers()).hasSize(2));
    assertThat(PromQl.parse("max_over_time(rate(x_total[1m])[10m:30s])").selectors()).hasSize(1);
    assertThat(PromQl.parse("max_over_time(rate(x_total[1m])[10m:])").selectors()).hasSize(1);
  }

  @Test
  void failsOnWhatItCannotRead() {
    assertThatThrownBy(() -> PromQl.parse("sum by (pool (x)"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("sum by (pool (x)");
    assertThatThrownBy(() -> PromQl.parse("x{a=b}")).hasMessageContaining("quoted string");
    assertThatThrownBy(() -> PromQl.parse("rate(x[5 m])")).hasMessageContaining("expected ]");
    assertThatThrownBy(() -> PromQl.parse("x{a=\"b\"")).hasMessageContaining("at the end");
  }
}
