package dev.vigil.reconcile;

import dev.vigil.health.HealthSettings;
import dev.vigil.probe.CheckSpec;
import io.fabric8.kubernetes.api.model.IntOrString;

/**
 * A validated HealthPolicy: the decision settings, the check, and the port to probe.
 *
 * @param port {@code active.port}: a number, a Pod port name, or null for the pool's first port
 * @param version changes when the policy's spec changes (its generation), or the content of the CA
 *     bundle or client certificate its {@code active.tls} names
 */
public record ResolvedPolicy(
    String name, long version, HealthSettings settings, CheckSpec check, IntOrString port) {}
