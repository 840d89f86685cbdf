package dev.vigil.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonClassDescription;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn.Type;
import io.fabric8.generator.annotation.Required;
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
 * Which Pods to check and where to publish the verdict: a selector-less Service and its
 * EndpointSlices.
 *
 * <p>The printer columns are listed in the order {@code kubectl get} shows them; the generator
 * sorts them by JSONPath and {@link dev.vigil.api.PrinterColumnOrder} restores this order.
 */
@JsonClassDescription(
    "Which Pods to check and where to publish the verdict: a selector-less Service and its"
        + " EndpointSlices, written by Vigil.")
@Group(HealthPolicy.GROUP)
@Version(HealthPolicy.VERSION)
@Kind("BackendPool")
@Singular("backendpool")
@Plural("backendpools")
@ShortNames("bp")
@Categories("vigil")
@AdditionalPrinterColumn(name = "Policy", jsonPath = ".spec.policyRef.name", type = Type.STRING)
@AdditionalPrinterColumn(name = "Available", jsonPath = ".status.availability", type = Type.STRING)
@AdditionalPrinterColumn(name = "Total", jsonPath = ".status.total", type = Type.INTEGER)
@AdditionalPrinterColumn(name = "Ejected", jsonPath = ".status.ejected", type = Type.INTEGER)
@AdditionalPrinterColumn(name = "Panic", jsonPath = ".status.panic", type = Type.BOOLEAN)
// Why the verdict is or is not published (Published, PolicyNotFound, InvalidPolicy, ...): a pool
// whose policy is missing shows 0/0 and no panic, and this says why.
@AdditionalPrinterColumn(
    name = "Reason",
    jsonPath = ".status.conditions[?(@.type==\"Ready\")].reason",
    type = Type.STRING)
@AdditionalPrinterColumn(
    name = "Shard",
    jsonPath = ".status.shard",
    type = Type.STRING,
    priority = 1)
@AdditionalPrinterColumn(name = "Age", jsonPath = ".metadata.creationTimestamp", type = Type.DATE)
public class BackendPool extends CustomResource<BackendPoolSpec, BackendPoolStatus>
    implements Namespaced {

  @Override
  protected BackendPoolSpec initSpec() {
    return new BackendPoolSpec();
  }

  @Override
  @JsonPropertyDescription(
      "Which Pods to check, which ports they serve, and which Service publishes them.")
  @Required
  public BackendPoolSpec getSpec() {
    return super.getSpec();
  }

  @Override
  @JsonPropertyDescription("The verdict: counts, conditions and per-backend state.")
  public BackendPoolStatus getStatus() {
    return super.getStatus();
  }
}
