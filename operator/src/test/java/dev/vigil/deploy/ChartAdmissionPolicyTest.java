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
    ValidatingAdmissionPolicy policy = chart.one(ValidatingAdmissionPolicy.class);
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
        .singleElement()
        .satisfies(v -> assertThat(v.getReason()).isEqualTo("Forbidden"));
    assertThat(String.valueOf(policy.getSpec().getVariables()))
        .contains("endpointslice.kubernetes.io/managed-by", "vigil.dev/pool", "oldObject");

    ValidatingAdmissionPolicyBinding binding = chart.one(ValidatingAdmissionPolicyBinding.class);
    assertThat(binding.getSpec().getPolicyName()).isEqualTo(policy.getMetadata().getName());
    assertThat(binding.getSpec().getValidationActions()).containsExactly("Deny");
  }

  @Test
  void aValueOtherThanAutoTrueOrFalseIsRefused() {
    assertThatThrownBy(() -> CHART.template("admissionPolicy: {enabled: sometimes}"))
        .hasMessageContaining("admissionPolicy");
  }
}
