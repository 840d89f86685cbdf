package dev.vigil.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import io.fabric8.kubernetes.api.model.LabelSelector;
import java.util.ArrayList;
import java.util.List;

/**
 * Which backends form a pool (Pods by selector, or targets that are not Pods), which ports it
 * serves, and which Service Vigil publishes it under.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(
    value = "has(self.selector) != has(self.targets)",
    message = "a pool has exactly one of spec.selector and spec.targets")
public class BackendPoolSpec {
  /** Most hostname entries one pool may have (each is re-resolved on its TTL). */
  public static final int MAX_HOSTNAMES = 16;

  @JsonPropertyDescription(
      "The HealthPolicy, in the pool's namespace, that decides how backends are checked.")
  @Required
  private PolicyRef policyRef;

  @JsonPropertyDescription(
      "Label selector over the Pods in the pool's namespace; each selected Pod with an IP is a backend. Exactly one of selector and targets.")
  private LabelSelector selector;

  @JsonPropertyDescription(
      "Backends that are not Pods (VMs, other clusters, SaaS endpoints): static addresses and DNS names. Exactly one of selector and targets. The pool's ports apply to every target, with a numeric targetPort. At most 256 entries, at most 16 of them hostnames.")
  @Size(min = 1, max = 256)
  @ValidationRule(
      value = "self.filter(t, has(t.hostname)).size() <= 16",
      message = "at most 16 hostname targets per pool")
  private List<BackendTarget> targets;

  @JsonPropertyDescription(
      "Ports the pool serves, as the Service and its EndpointSlices expose them. Names are required and unique when there is more than one port. At most 16 ports.")
  @Required
  @Size(min = 1, max = 16)
  @ValidationRule(
      value =
          "size(self) == 1 || self.all(p, has(p.name) && self.exists_one(q, has(q.name) && q.name == p.name))",
      message = "with more than one port, every port needs a unique name")
  private List<PoolPort> ports = new ArrayList<>();

  @JsonPropertyDescription("The selector-less Service whose EndpointSlices Vigil writes.")
  @Default("{}")
  private ServiceRef service = new ServiceRef();

  @JsonPropertyDescription(
      "Largest number of endpoints in one EndpointSlice; larger pools are split across slices.")
  @Default("100")
  @Min(1)
  @Max(1000)
  private Integer maxEndpointsPerSlice = 100;

  @JsonPropertyDescription(
      "Treat a Pod that the kubelet reports not Ready like a draining backend: never published as ready, and outside the panic denominator.")
  @Default("true")
  private Boolean respectPodReadiness = true;

  @JsonPropertyDescription(
      "Admin states of single backends (docs/decision.md): drain or maint a Pod by name, as the Pod annotation vigil.dev/admin-state does; in a pool of targets, name a target by its address, its hostname (every address of it), or hostname/address. At most 1000 entries; where two name the same Pod, the stricter applies.")
  @Size(max = 1000)
  private List<AdminStateEntry> adminStates;

  public PolicyRef getPolicyRef() {
    return policyRef;
  }

  public void setPolicyRef(PolicyRef policyRef) {
    this.policyRef = policyRef;
  }

  public LabelSelector getSelector() {
    return selector;
  }

  public void setSelector(LabelSelector selector) {
    this.selector = selector;
  }

  public List<BackendTarget> getTargets() {
    return targets;
  }

  public void setTargets(List<BackendTarget> targets) {
    this.targets = targets;
  }

  public List<PoolPort> getPorts() {
    return ports;
  }

  public void setPorts(List<PoolPort> ports) {
    this.ports = ports;
  }

  public ServiceRef getService() {
    return service;
  }

  public void setService(ServiceRef service) {
    this.service = service;
  }

  public Integer getMaxEndpointsPerSlice() {
    return maxEndpointsPerSlice;
  }

  public void setMaxEndpointsPerSlice(Integer maxEndpointsPerSlice) {
    this.maxEndpointsPerSlice = maxEndpointsPerSlice;
  }

  public Boolean getRespectPodReadiness() {
    return respectPodReadiness;
  }

  public void setRespectPodReadiness(Boolean respectPodReadiness) {
    this.respectPodReadiness = respectPodReadiness;
  }

  public List<AdminStateEntry> getAdminStates() {
    return adminStates;
  }

  public void setAdminStates(List<AdminStateEntry> adminStates) {
    this.adminStates = adminStates;
  }
}
