package dev.vigil.runtime;

import dev.vigil.health.BackendState;

/**
 * A backend's state as a previous operator left it in status and slices, so a restart does not
 * start the pool over from Unknown (DESIGN §2 rule 8).
 */
public record RestoredBackend(BackendState state, int ejections, long ejectedUntil) {}
