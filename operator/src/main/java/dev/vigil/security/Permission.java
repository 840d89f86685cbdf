package dev.vigil.security;

import java.util.Objects;

/**
 * What a caller asks to do, as a SubjectAccessReview's attributes: a verb on a resource (with its
 * namespace and name) or on a non-resource URL path.
 *
 * @param path the non-resource URL, or null for a resource
 */
public record Permission(
    String verb,
    String group,
    String resource,
    String subresource,
    String namespace,
    String name,
    String path) {

  /** {@code get} on {@code /metrics} (the chart's {@code vigil-metrics-reader} grants it). */
  public static final Permission READ_METRICS =
      new Permission("get", null, null, null, null, null, "/metrics");

  /** The API group, resource and subresource reporters need {@code create} on. */
  public static final String OUTCOMES_GROUP = "vigil.dev";

  public static final String OUTCOMES_RESOURCE = "backendpools";
  public static final String OUTCOMES_SUBRESOURCE = "outcomes";

  public Permission {
    Objects.requireNonNull(verb, "verb");
  }

  /** {@code create backendpools/outcomes} on one pool: reporting its request outcomes. */
  public static Permission reportOutcomes(String namespace, String pool) {
    return new Permission(
        "create", OUTCOMES_GROUP, OUTCOMES_RESOURCE, OUTCOMES_SUBRESOURCE, namespace, pool, null);
  }

  /** Whether this is a non-resource URL permission. */
  public boolean nonResource() {
    return path != null;
  }

  /** A key that is the same exactly when the permission is. */
  String key() {
    return verb
        + '\u0000'
        + group
        + '\u0000'
        + resource
        + '\u0000'
        + subresource
        + '\u0000'
        + namespace
        + '\u0000'
        + name
        + '\u0000'
        + path;
  }
}
