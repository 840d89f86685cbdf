package dev.vigil.runtime;

/** The latest active probe of a backend. */
public record LastProbe(long at, boolean ok, long latencyMs, String detail) {}
