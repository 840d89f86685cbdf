package dev.vigil.health;

/**
 * What one real-request outcome did about ejection.
 *
 * @param kind what happened
 * @param ejectedUntil the end of the ejection (epoch ms) for {@link Kind#EJECTED}, the end it would
 *     have had for {@link Kind#WOULD_EJECT}, and {@code -1} otherwise
 * @param window whether the failures-within-a-window rule (docs/design.md §2.2, {@code
 *     passive.windowFailures}) made this decision; false when the consecutive-errors run reached
 *     its threshold (that rule is named when both trip on one outcome)
 */
public record EjectionDecision(Kind kind, long ejectedUntil, boolean window) {

  /** A decision of the consecutive-errors rule. */
  public EjectionDecision(Kind kind, long ejectedUntil) {
    this(kind, ejectedUntil, false);
  }

  /** The kinds of decision. */
  public enum Kind {
    /** The error run reached its threshold and the backend is now ejected. */
    EJECTED,
    /**
     * The error run is at its threshold, but the ejection would put more than {@code
     * passive.maxEjectionPercent} of the pool out. Counted in {@link
     * PoolHealth#refusedEjections()}.
     */
    REFUSED_BY_CAP,
    /**
     * Dry run ({@code passive.enforce: false}): the backend would have been ejected; nobody is.
     * Counted in {@link PoolHealth#wouldEjectCount()}.
     */
    WOULD_EJECT,
    /** No ejection was due (success, run below threshold, rule disabled, or already ejected). */
    NOT_NEEDED
  }

  public static final EjectionDecision NOT_NEEDED = new EjectionDecision(Kind.NOT_NEEDED, -1);
  public static final EjectionDecision REFUSED_BY_CAP =
      new EjectionDecision(Kind.REFUSED_BY_CAP, -1);

  static final EjectionDecision REFUSED_BY_CAP_WINDOW =
      new EjectionDecision(Kind.REFUSED_BY_CAP, -1, true);

  /** The same decision, made by the failures-within-a-window rule. */
  EjectionDecision byWindow() {
    return kind == Kind.REFUSED_BY_CAP
        ? REFUSED_BY_CAP_WINDOW
        : new EjectionDecision(kind, ejectedUntil, true);
  }

  static EjectionDecision ejected(long until) {
    return new EjectionDecision(Kind.EJECTED, until);
  }

  static EjectionDecision wouldEject(long until) {
    return new EjectionDecision(Kind.WOULD_EJECT, until);
  }

  public boolean isEjected() {
    return kind == Kind.EJECTED;
  }
}
