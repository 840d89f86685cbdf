package dev.vigil.runtime;

import dev.vigil.health.AvailabilitySnapshot;
import java.util.List;

/**
 * An immutable picture of one pool's runtime, handed from the pool's Vert.x context to reconcilers
 * on any thread.
 *
 * @param snapshot the decision core's published set and counts
 * @param backends every member, in id order
 * @param ejections ejections so far
 * @param refusedEjections ejections the cap refused so far
 * @param materialVersion changes whenever something a status or slice writer shows changed
 */
public record PoolView(
    AvailabilitySnapshot snapshot,
    List<BackendSnapshot> backends,
    long ejections,
    long refusedEjections,
    long materialVersion) {}
