package dev.vigil.runtime;

/**
 * The latest active probe of a backend, as the runtime saw it (status shows it as {@link
 * dev.vigil.api.v1alpha1.LastProbe}).
 */
public record ProbeSummary(long at, boolean ok, long latencyMs, String detail) {}
