package dev.vigil.publish;

import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import java.util.List;
import java.util.Optional;

/**
 * Decides whether Vigil may publish a pool's slices for a Service. Conflicts are refused, never
 * merged (docs/design.md §3): kube-proxy merges every slice carrying the service-name label, so
 * another writer would silently undo Vigil's verdict.
 */
public final class PublishingGuard {
  /** Why publishing is refused: a condition reason and a message for people. */
  public record Refusal(String reason, String message) {}

  public static final String SERVICE_HAS_SELECTOR = "ServiceHasSelector";
  public static final String FOREIGN_ENDPOINT_SLICES = "ForeignEndpointSlices";
  public static final String SERVICE_CONFLICT = "ServiceConflict";
  public static final String SERVICE_NOT_FOUND = "ServiceNotFound";

  private PublishingGuard() {}

  /**
   * @param service the live Service, or null when absent
   * @param manage the pool may create the Service
   * @param foreignSlices slices with this Service's name label that Vigil did not write
   * @param leftoverEndpoints an Endpoints object of the same name exists
   * @param earlierClaimant another pool (older, or same age with a smaller name) naming this
   *     Service, or null
   */
  public static Optional<Refusal> check(
      String serviceName,
      Service service,
      boolean manage,
      List<EndpointSlice> foreignSlices,
      boolean leftoverEndpoints,
      String earlierClaimant) {
    if (earlierClaimant != null) {
      return Optional.of(claimedEarlier(serviceName, earlierClaimant));
    }
    if (service == null && !manage) {
      return Optional.of(serviceMissing(serviceName));
    }
    if (service != null
        && service.getSpec() != null
        && service.getSpec().getSelector() != null
        && !service.getSpec().getSelector().isEmpty()) {
      return Optional.of(serviceHasSelector(serviceName));
    }
    if (!foreignSlices.isEmpty()) {
      return Optional.of(foreignSlice(serviceName, foreignSlices.get(0)));
    }
    if (leftoverEndpoints) {
      return Optional.of(leftoverEndpoints(serviceName));
    }
    return Optional.empty();
  }

  private static Refusal claimedEarlier(String serviceName, String earlierClaimant) {
    return new Refusal(
        SERVICE_CONFLICT,
        "Service "
            + serviceName
            + " is already published by BackendPool "
            + earlierClaimant
            + "; give this pool its own spec.service.name");
  }

  private static Refusal serviceMissing(String serviceName) {
    return new Refusal(
        SERVICE_NOT_FOUND,
        "Service "
            + serviceName
            + " does not exist and spec.service.manage is false; create it without a"
            + " selector or set spec.service.manage: true");
  }

  private static Refusal serviceHasSelector(String serviceName) {
    return new Refusal(
        SERVICE_HAS_SELECTOR,
        "Service "
            + serviceName
            + " has a selector, so Kubernetes writes its EndpointSlices too and consumers"
            + " would merge both; remove spec.selector from the Service or name another"
            + " one in spec.service.name");
  }

  private static Refusal foreignSlice(String serviceName, EndpointSlice foreign) {
    return new Refusal(
        FOREIGN_ENDPOINT_SLICES,
        "EndpointSlice "
            + foreign.getMetadata().getName()
            + " also carries kubernetes.io/service-name="
            + serviceName
            + " and is not Vigil's; delete it so one verdict is published");
  }

  private static Refusal leftoverEndpoints(String serviceName) {
    return new Refusal(
        FOREIGN_ENDPOINT_SLICES,
        "an Endpoints object named "
            + serviceName
            + " exists and would be mirrored into EndpointSlices; delete it");
  }
}
