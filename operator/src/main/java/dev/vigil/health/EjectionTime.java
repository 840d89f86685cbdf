package dev.vigil.health;

/**
 * How long an ejection lasts: {@code baseEjectionTime x multiplier}, capped at {@code
 * maxEjectionTime}. The multiplier grows by one per ejection only while the uncapped time is below
 * the maximum (as Envoy does), so it stays small and decay brings it back quickly.
 */
final class EjectionTime {
  private EjectionTime() {}

  /** The multiplier an ejection starting now uses. */
  static int nextMultiplier(int multiplier, HealthSettings s) {
    long base = s.baseEjectionTimeMs();
    long max = s.maxEjectionTimeMs();
    boolean belowMax = multiplier < max / base || (multiplier == max / base && max % base != 0);
    return belowMax && multiplier < Integer.MAX_VALUE ? multiplier + 1 : multiplier;
  }

  /** When an ejection with this multiplier, starting at {@code now}, ends. */
  static long until(long now, int multiplier, HealthSettings s) {
    long base = s.baseEjectionTimeMs();
    long max = s.maxEjectionTimeMs();
    long duration = multiplier > max / base ? max : Math.min(base * multiplier, max);
    long until = now + duration;
    return until < now ? Long.MAX_VALUE : until;
  }
}
