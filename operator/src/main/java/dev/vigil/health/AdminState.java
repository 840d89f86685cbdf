package dev.vigil.health;

import java.util.Locale;

/**
 * What an operator said about one backend, by hand (HAProxy's {@code set server ... state},
 * Consul's maintenance mode): the Pod annotation {@code vigil.dev/admin-state} or an entry of
 * {@code BackendPool.spec.adminStates}. {@link #UP} holds nothing: the agent and the checks decide.
 */
public enum AdminState {
  /** No hold (also spelled {@code ready}). */
  UP,
  /** Published {@code ready=false, serving=<health>, terminating=true}, like a terminating Pod. */
  DRAIN,
  /** Left out of the EndpointSlice altogether. */
  MAINT;

  /** The Pod annotation that carries an admin state ({@code kubectl vigil drain|maint|ready}). */
  public static final String ANNOTATION = "vigil.dev/admin-state";

  /** The lower-case word used in annotations, specs and the CLI. */
  public String word() {
    return name().toLowerCase(Locale.ROOT);
  }

  /**
   * Parses {@code drain}, {@code maint}, {@code up} or {@code ready} (any case, surrounding blanks
   * ignored).
   *
   * @param field names the field in the error, e.g. {@code annotation vigil.dev/admin-state}
   * @throws IllegalArgumentException naming the field and the accepted words
   */
  public static AdminState parse(String field, String value) {
    String v = value == null ? "" : value.trim().toLowerCase(Locale.ROOT);
    return switch (v) {
      case "up", "ready" -> UP;
      case "drain" -> DRAIN;
      case "maint" -> MAINT;
      default ->
          throw new IllegalArgumentException(
              field + ": '" + value + "' is not an admin state (drain, maint, up or ready)");
    };
  }

  /** The stricter of two admin states: MAINT over DRAIN over UP. */
  public AdminState strictest(AdminState other) {
    return other.ordinal() > ordinal() ? other : this;
  }
}
