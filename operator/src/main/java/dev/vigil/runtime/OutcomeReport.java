package dev.vigil.runtime;

import dev.vigil.health.Origin;

/**
 * One real-request outcome for a backend of a pool, as a reporter sent it (docs/design.md §4).
 *
 * @param ip the backend's Pod IP
 * @param ok whether the request succeeded
 * @param origin where a failure originated
 * @param latencyMs the request's latency, or -1 when not reported; carried for the latency rule,
 *     not used by the decision core yet
 */
public record OutcomeReport(String ip, boolean ok, Origin origin, long latencyMs) {}
