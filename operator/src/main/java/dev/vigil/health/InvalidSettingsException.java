package dev.vigil.health;

/**
 * A policy value that {@link HealthSettings} refuses. {@link #field()} is the path of the bad field
 * as a user writes it in a {@code HealthPolicy} (for example {@code active.rise}), and the message
 * starts with it, so it can go into the policy's {@code Accepted} condition as is.
 */
public final class InvalidSettingsException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  private final String field;

  public InvalidSettingsException(String field, String problem) {
    super(field + ": " + problem);
    this.field = field;
  }

  /** The path of the rejected field, such as {@code passive.maxEjectionTime}. */
  public String field() {
    return field;
  }

  /** Throws naming {@code field} unless {@code min <= value <= max}. */
  static void checkBetween(String field, int value, int min, int max) {
    if (value < min || value > max) {
      throw new InvalidSettingsException(
          field, "must be between " + min + " and " + max + ", was " + value);
    }
  }

  /** Throws naming {@code field} unless {@code value >= min} (in {@code unit}). */
  static void checkAtLeast(String field, long value, long min, String unit) {
    if (value < min) {
      throw new InvalidSettingsException(
          field, "must be at least " + min + unit + ", was " + value + unit);
    }
  }
}
