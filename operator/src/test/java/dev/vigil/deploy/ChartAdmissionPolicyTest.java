package dev.vigil.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.admissionregistration.v1.NamedRuleWithOperations;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicy;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicyBinding;
import org.junit.jupiter.api.Test;

/**
 * The chart's ValidatingAdmissionPolicy: on where the API exists ("auto", which an offline render
 * cannot see), forced on or off by a value, and matching only Vigil's ServiceAccount's writes of
 * EndpointSlices and Services. {@code AdmissionPolicyE2E} proves it on a real API server.
 */
class ChartAdmissionPolicyTest {
  private static final VigilChart CHART = VigilChart.locate();

  @Test
  void autoRendersNothingWhereTheApiIsNotKnown() {
    RenderedChart chart = CHART.render("");
    assertThat(chart.objects()).noneMatch(o -> o instanceof ValidatingAdmissionPolicy);
    assertThat(CHART.render("admissionPolicy: {enabled: false}").objects())
        .noneMatch(o -> o instanceof ValidatingAdmissionPolicy);
  }

  @Test
  void matchesOnlyTheOperatorsWritesOfSlicesAndServices() {
    RenderedChart chart = CHART.render("admissionPolicy: {enabled: true}");
    ValidatingAdmissionPolicy policy =
        chart.require(ValidatingAdmissionPolicy.class, "vigil-owned-writes");
    assertThat(policy.getSpec().getFailurePolicy()).isEqualTo("Fail");
    assertThat(policy.getSpec().getMatchConditions())
        .singleElement()
        .satisfies(
            c ->
                assertThat(c.getExpression())
                    .isEqualTo(
                        "request.userInfo.username == \"system:serviceaccount:vigil-system:vigil\""));
    assertThat(policy.getSpec().getMatchConstraints().getResourceRules())
        .extracting(NamedRuleWithOperations::getResources)
        .containsExactly(java.util.List.of("endpointslices"), java.util.List.of("services"));
    assertThat(policy.getSpec().getValidations())
        .hasSize(5)
        .allSatisfy(v -> assertThat(v.getReason()).isEqualTo("Forbidden"));
    assertThat(String.valueOf(policy.getSpec().getVariables()))
        .contains("endpointslice.kubernetes.io/managed-by", "vigil.dev/pool", "oldObject");

    ValidatingAdmissionPolicyBinding binding =
        chart.require(ValidatingAdmissionPolicyBinding.class, "vigil-owned-writes");
    assertThat(binding.getSpec().getPolicyName()).isEqualTo(policy.getMetadata().getName());
    assertThat(binding.getSpec().getValidationActions()).containsExactly("Deny");
  }

  /** Issue 31, item 5: what a stolen token may still write, rule by rule. */
  @Test
  void slicesMustBeOwnedByAPoolPointAtPodsOfTheirNamespaceAndNeverAtTheApiServer() {
    ValidatingAdmissionPolicy policy =
        CHART
            .render("admissionPolicy: {enabled: true}")
            .require(ValidatingAdmissionPolicy.class, "vigil-owned-writes");
    assertThat(variable(policy, "ownedByPool"))
        .contains("ownerReferences", "r.kind == \"BackendPool\"", "r.controller");
    assertThat(variable(policy, "podsOfNamespace"))
        .contains(
            "object.endpoints.all(",
            "!has(e.targetRef) || (e.targetRef.kind == \"Pod\"",
            "e.targetRef.namespace == request.namespace");
    assertThat(variable(policy, "notApiServer"))
        .contains("request.namespace == \"default\"", "== \"kubernetes\"");
    assertThat(variable(policy, "plainService"))
        .contains("object.spec.type == \"ClusterIP\"", "object.spec.selector", "externalIPs");
    assertThat(policy.getSpec().getValidations())
        .extracting(v -> v.getExpression())
        .contains(
            "variables.ownedByPool",
            "variables.podsOfNamespace",
            "variables.notApiServer",
            "variables.plainService");
  }

  @Test
  void aSlicesServiceIsTheOneItsOwningPoolNamesWithThePoolsAsParams() {
    RenderedChart chart = CHART.render("admissionPolicy: {enabled: true}");
    ValidatingAdmissionPolicy policy =
        chart.require(ValidatingAdmissionPolicy.class, "vigil-slice-service");
    assertThat(policy.getSpec().getParamKind().getKind()).isEqualTo("BackendPool");
    assertThat(policy.getSpec().getParamKind().getApiVersion()).isEqualTo("vigil.dev/v1alpha1");
    assertThat(policy.getSpec().getMatchConditions())
        .singleElement()
        .satisfies(
            c ->
                assertThat(c.getExpression()).contains("system:serviceaccount:vigil-system:vigil"));
    assertThat(variable(policy, "ownedByThisPool")).contains("r.uid == params.metadata.uid");
    assertThat(variable(policy, "poolService"))
        .contains("params.spec.service.name", "params.metadata.name");
    assertThat(policy.getSpec().getValidations())
        .hasSize(2)
        .first()
        .satisfies(
            v ->
                assertThat(v.getExpression())
                    .contains("kubernetes.io/service-name", "variables.poolService"));
    // issue 35: endpoints without a targetRef only for a pool of spec.targets
    assertThat(policy.getSpec().getValidations().get(1).getExpression())
        .contains("has(params.spec.targets)", "object.endpoints.all(e, has(e.targetRef))");
    ValidatingAdmissionPolicyBinding binding =
        chart.require(ValidatingAdmissionPolicyBinding.class, "vigil-slice-service");
    assertThat(binding.getSpec().getParamRef().getParameterNotFoundAction()).isEqualTo("Deny");
    assertThat(binding.getSpec().getParamRef().getSelector()).isNotNull();
    assertThat(binding.getSpec().getParamRef().getNamespace())
        .as("the pools of the slice's own namespace")
        .isNull();
  }

  @Test
  void onlyVigilsServiceAccountMaySetOrChangeTheShardLabel() {
    RenderedChart chart = CHART.render("admissionPolicy: {enabled: true}");
    ValidatingAdmissionPolicy policy =
        chart.require(ValidatingAdmissionPolicy.class, "vigil-shard-label");
    assertThat(policy.getSpec().getMatchConstraints().getResourceRules())
        .singleElement()
        .satisfies(
            r -> {
              assertThat(r.getResources()).containsExactly("backendpools");
              assertThat(r.getApiGroups()).containsExactly("vigil.dev");
              assertThat(r.getOperations()).containsExactlyInAnyOrder("CREATE", "UPDATE");
            });
    assertThat(policy.getSpec().getMatchConditions())
        .singleElement()
        .satisfies(
            c ->
                assertThat(c.getExpression())
                    .isEqualTo(
                        "request.userInfo.username != \"system:serviceaccount:vigil-system:vigil\""));
    assertThat(variable(policy, "newShard")).contains("vigil.dev/shard", "object.metadata.labels");
    assertThat(variable(policy, "oldShard")).contains("vigil.dev/shard", "oldObject");
    assertThat(policy.getSpec().getValidations())
        .singleElement()
        .satisfies(
            v ->
                assertThat(v.getExpression())
                    .isEqualTo("variables.newShard == variables.oldShard"));
    assertThat(chart.require(ValidatingAdmissionPolicyBinding.class, "vigil-shard-label"))
        .satisfies(b -> assertThat(b.getSpec().getValidationActions()).containsExactly("Deny"));
  }

  @Test
  void valuesNoLongerClaimMoreThanThePolicyChecks() throws Exception {
    String values =
        java.nio.file.Files.readString(CHART.repoRoot().resolve("deploy/helm/vigil/values.yaml"));
    assertThat(values).doesNotContain("cannot\n  # redirect other Services' traffic");
    assertThat(values).contains("vigil.dev/shard");
  }

  private static String variable(ValidatingAdmissionPolicy policy, String name) {
    return policy.getSpec().getVariables().stream()
        .filter(v -> v.getName().equals(name))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no variable " + name))
        .getExpression();
  }

  @Test
  void aValueOtherThanAutoTrueOrFalseIsRefused() {
    assertThatThrownBy(() -> CHART.template("admissionPolicy: {enabled: sometimes}"))
        .hasMessageContaining("admissionPolicy");
  }
}
