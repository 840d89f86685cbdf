package dev.vigil.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonClassDescription;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn.Type;
import io.fabric8.generator.annotation.Default;
import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Categories;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Kind;
import io.fabric8.kubernetes.model.annotation.Plural;
import io.fabric8.kubernetes.model.annotation.ShortNames;
import io.fabric8.kubernetes.model.annotation.Singular;
import io.fabric8.kubernetes.model.annotation.Version;

/**
 * How to check backends; reusable by many BackendPools in its namespace.
 *
 * <p>The printer columns are listed in the order {@code kubectl get} shows them; the generator
 * sorts them by JSONPath and {@link dev.vigil.api.PrinterColumnOrder} restores this order.
 */
@JsonClassDescription("How Vigil checks the backends of the BackendPools that refer to it.")
@Group(HealthPolicy.GROUP)
@Version(HealthPolicy.VERSION)
@Kind("HealthPolicy")
@Singular("healthpolicy")
@Plural("healthpolicies")
@ShortNames("hp")
@Categories("vigil")
@AdditionalPrinterColumn(name = "Protocol", jsonPath = ".spec.active.protocol", type = Type.STRING)
@AdditionalPrinterColumn(name = "Interval", jsonPath = ".spec.active.interval", type = Type.STRING)
@AdditionalPrinterColumn(name = "Rise", jsonPath = ".spec.active.rise", type = Type.INTEGER)
@AdditionalPrinterColumn(name = "Fall", jsonPath = ".spec.active.fall", type = Type.INTEGER)
@AdditionalPrinterColumn(name = "Pools", jsonPath = ".status.pools", type = Type.INTEGER)
@AdditionalPrinterColumn(name = "Available", jsonPath = ".status.availability", type = Type.STRING)
@AdditionalPrinterColumn(
    name = "Accepted",
    jsonPath = ".status.conditions[?(@.type==\"Accepted\")].status",
    type = Type.STRING)
@AdditionalPrinterColumn(name = "Age", jsonPath = ".metadata.creationTimestamp", type = Type.DATE)
public class HealthPolicy extends CustomResource<HealthPolicySpec, HealthPolicyStatus>
    implements Namespaced {

  public static final String GROUP = "vigil.dev";
  public static final String VERSION = "v1alpha1";

  @Override
  protected HealthPolicySpec initSpec() {
    return new HealthPolicySpec();
  }

  @Override
  @JsonPropertyDescription(
      "How to check backends; every field has a default, so an empty spec is a valid policy.")
  @Default("{}")
  public HealthPolicySpec getSpec() {
    return super.getSpec();
  }

  @Override
  @JsonPropertyDescription(
      "What Vigil observed: whether the policy is accepted, and the pools that use it.")
  public HealthPolicyStatus getStatus() {
    return super.getStatus();
  }
}
