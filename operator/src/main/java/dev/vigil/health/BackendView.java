package dev.vigil.health;

/** An immutable copy of one backend's decision state, for status writers on any thread. */
public record BackendView(
    String id,
    BackendState state,
    int passRun,
    int failRun,
    int upstreamErrors,
    int localOriginErrors,
    int multiplier,
    boolean ejected,
    long ejectedUntil,
    boolean draining,
    boolean available) {}
