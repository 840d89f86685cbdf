package dev.vigil.api;

/**
 * Condition types and reasons written to the status of Vigil's custom resources. Types and reasons
 * are PascalCase, as Kubernetes' own conditions are.
 */
public final class Conditions {

  // Condition types.
  /** HealthPolicy: the policy passed validation and is in use. */
  public static final String ACCEPTED = "Accepted";

  /** BackendPool: the pool's verdict is published to its EndpointSlices. */
  public static final String READY = "Ready";

  /** BackendPool: too few backends are available, so every decided backend is published. */
  public static final String PANIC = "Panic";

  /** BackendPool: some backends are down or ejected. */
  public static final String DEGRADED = "Degraded";

  /** BackendPool, sharded: a replica owns the pool and probes it. */
  public static final String PROBING = "Probing";

  /**
   * BackendPool: the replica that decides the pool doubts its own probes (docs/design.md §8): its
   * failing share is far above its peers'.
   */
  public static final String CHECKER_SUSPECT = "CheckerSuspect";

  /**
   * BackendPool: the replica that probes the pool is asked for more probes than its budget even
   * with every interval but hot ones at maxInterval (docs/design.md §9): detection is degraded.
   */
  public static final String PROBE_BUDGET_EXCEEDED = "ProbeBudgetExceeded";

  /**
   * BackendPool with {@code spec.targets}: every hostname target resolves (False, reason {@code
   * NotResolving}, names the ones that do not and whether their last answer is still kept).
   */
  public static final String TARGETS_RESOLVED = "TargetsResolved";

  // Condition statuses.
  public static final String TRUE = "True";
  public static final String FALSE = "False";
  public static final String UNKNOWN = "Unknown";

  // Reasons.
  public static final String VALID = "Valid";
  public static final String INVALID_POLICY = "InvalidPolicy";
  public static final String POLICY_NOT_FOUND = "PolicyNotFound";
  public static final String NO_BACKENDS = "NoBackends";
  public static final String SERVICE_HAS_SELECTOR = "ServiceHasSelector";
  public static final String FOREIGN_ENDPOINT_SLICES = "ForeignEndpointSlices";
  public static final String SERVICE_CONFLICT = "ServiceConflict";
  public static final String PUBLISHED = "Published";
  public static final String PUBLISH_FAILED = "PublishFailed";
  public static final String PANIC_THRESHOLD_REACHED = "PanicThresholdReached";
  public static final String ENOUGH_AVAILABLE = "EnoughAvailable";
  public static final String BACKENDS_UNAVAILABLE = "BackendsUnavailable";
  public static final String ALL_AVAILABLE = "AllAvailable";
  public static final String OWNED = "Owned";
  public static final String HANDING_OVER = "HandingOver";
  public static final String CONFIRMING = "Confirming";
  public static final String FROZEN = "Frozen";
  public static final String HEALTHY = "Healthy";
  public static final String HOT_STRETCHED = "HotStretched";
  public static final String WITHIN_BUDGET = "WithinBudget";
  public static final String INVALID_TARGETS = "InvalidTargets";
  public static final String RESOLVED = "Resolved";
  public static final String NOT_RESOLVING = "NotResolving";

  private Conditions() {}
}
