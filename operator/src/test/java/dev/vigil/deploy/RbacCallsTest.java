package dev.vigil.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.deploy.RbacCalls.Grant;
import dev.vigil.deploy.RbacCalls.Scope;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.api.model.rbac.Subject;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The chart's RBAC grants exactly the calls in deploy/rbac-calls.yaml: no more, no less. */
class RbacCallsTest {
  private static VigilChart vigil;
  private static RbacCalls calls;
  private static RenderedChart chart;

  @BeforeAll
  static void render() {
    vigil = VigilChart.locate();
    calls = RbacCalls.load(vigil.repoRoot().resolve("deploy/rbac-calls.yaml"));
    chart = vigil.render("");
  }

  @Test
  void listsEveryScopeAndNoCallTwice() {
    assertThat(Arrays.stream(Scope.values()).map(calls::grants)).allMatch(g -> !g.isEmpty());
    int listed =
        calls.calls().stream().mapToInt(c -> c.resources().size() * c.verbs().size()).sum();
    int distinct = Arrays.stream(Scope.values()).mapToInt(s -> calls.grants(s).size()).sum();
    assertThat(distinct).as("a call listed twice").isEqualTo(listed);
  }

  @Test
  void grantsTheWatchedNamespaceCallsInTheOperatorClusterRole() {
    ClusterRole role = chart.require(ClusterRole.class, "vigil");
    assertThat(grants(role.getRules())).containsExactlyElementsOf(calls.grants(Scope.WATCHED));
  }

  @Test
  void grantsTheClusterScopedReviewsInTheirOwnClusterRole() {
    ClusterRole role = chart.require(ClusterRole.class, "vigil-reviews");
    assertThat(grants(role.getRules())).containsExactlyElementsOf(calls.grants(Scope.CLUSTER));
  }

  @Test
  void grantsLeasesOnlyInTheReleaseNamespace() {
    Role role = chart.require(Role.class, "vigil-leader-election");
    assertThat(role.getMetadata().getNamespace()).isEqualTo(VigilChart.NAMESPACE);
    assertThat(grants(role.getRules())).containsExactlyElementsOf(calls.grants(Scope.RELEASE));
  }

  @Test
  void grantsNothingElseToTheOperator() {
    assertThat(chart.all(ClusterRole.class))
        .extracting(r -> r.getMetadata().getName())
        .containsExactlyInAnyOrder(
            "vigil", "vigil-reviews", "vigil-outcome-reporter", "vigil-metrics-reader");
    assertThat(chart.all(Role.class)).hasSize(1);
    assertThat(chart.all(ClusterRoleBinding.class))
        .extracting(b -> b.getRoleRef().getName())
        .containsExactlyInAnyOrder("vigil", "vigil-reviews");
    assertThat(chart.all(RoleBinding.class))
        .extracting(b -> b.getRoleRef().getName())
        .containsExactly("vigil-leader-election");
    assertThat(chart.all(ClusterRoleBinding.class))
        .allSatisfy(b -> assertThat(b.getSubjects()).singleElement().satisfies(this::isOperator));
    assertThat(chart.all(RoleBinding.class))
        .allSatisfy(b -> assertThat(b.getSubjects()).singleElement().satisfies(this::isOperator));
  }

  @Test
  void bindsTheWatchedNamespaceRoleOnlyInListedNamespaces() {
    RenderedChart scoped = vigil.render("watchNamespaces: [shop, payments]");
    assertThat(scoped.all(ClusterRoleBinding.class))
        .extracting(b -> b.getRoleRef().getName())
        .containsExactly("vigil-reviews");
    assertThat(scoped.all(RoleBinding.class))
        .filteredOn(b -> b.getRoleRef().getName().equals("vigil"))
        .extracting(b -> b.getRoleRef().getKind() + " in " + b.getMetadata().getNamespace())
        .containsExactlyInAnyOrder("ClusterRole in shop", "ClusterRole in payments");
    assertThat(grants(scoped.require(ClusterRole.class, "vigil").getRules()))
        .containsExactlyElementsOf(calls.grants(Scope.WATCHED));
  }

  @Test
  void offersOutcomeReportersCreateOnBackendPoolOutcomesOnly() {
    ClusterRole reporter = chart.require(ClusterRole.class, "vigil-outcome-reporter");
    assertThat(grants(reporter.getRules()))
        .containsExactly(new Grant("vigil.dev", "backendpools/outcomes", "create"));
  }

  @Test
  void offersMetricsScrapersGetOnTheMetricsUrlOnlyAndBindsItToNobody() {
    ClusterRole reader = chart.require(ClusterRole.class, "vigil-metrics-reader");
    assertThat(reader.getRules())
        .singleElement()
        .satisfies(
            r -> {
              assertThat(r.getNonResourceURLs()).containsExactly("/metrics");
              assertThat(r.getVerbs()).containsExactly("get");
              assertThat(r.getResources()).isNullOrEmpty();
            });
    assertThat(
            vigil
                .render("metrics: {secure: false}")
                .named(ClusterRole.class, "vigil-metrics-reader"))
        .isEmpty();
  }

  private void isOperator(Subject subject) {
    assertThat(subject.getKind()).isEqualTo("ServiceAccount");
    assertThat(subject.getName()).isEqualTo("vigil");
    assertThat(subject.getNamespace()).isEqualTo(VigilChart.NAMESPACE);
  }

  /** Rules as grants, after checking they use no wildcard, resource name or non-resource URL. */
  private static Set<Grant> grants(List<PolicyRule> rules) {
    assertThat(rules)
        .isNotEmpty()
        .allSatisfy(
            rule -> {
              assertThat(rule.getResourceNames()).isNullOrEmpty();
              assertThat(rule.getNonResourceURLs()).isNullOrEmpty();
              assertThat(rule.getApiGroups()).doesNotContain("*");
              assertThat(rule.getResources()).doesNotContain("*");
              assertThat(rule.getVerbs()).doesNotContain("*");
            });
    return RbacCalls.grantsOf(rules);
  }
}
