package dev.vigil.probe;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The HTTP statuses that pass, as codes and inclusive ranges ({@code "200"}, {@code "200-399"}),
 * each within 100..599 (docs/design.md §1 {@code active.http.expectedStatuses}).
 */
public final class ExpectedStatuses {

  /** 2xx and 3xx pass, as HAProxy's httpchk and the kubelet. */
  public static final ExpectedStatuses DEFAULT =
      new ExpectedStatuses(List.of(new int[] {200, 399}));

  /** No status at all: the default of {@code active.http.failFastStatuses}. */
  public static final ExpectedStatuses NONE = new ExpectedStatuses(List.of());

  private final List<int[]> ranges;

  private ExpectedStatuses(List<int[]> ranges) {
    this.ranges = ranges;
  }

  /**
   * Parses codes and ranges; errors name the field and the element, e.g. {@code
   * active.http.expectedStatuses[1]: "600" is outside 100..599}.
   *
   * @param field the field name to put in error messages
   * @param values codes ({@code "204"}) or ranges ({@code "200-399"}); empty or null = default
   * @throws IllegalArgumentException naming the field when a value is invalid
   */
  public static ExpectedStatuses parse(String field, List<String> values) {
    if (values == null || values.isEmpty()) {
      return DEFAULT;
    }
    List<int[]> ranges = new ArrayList<>(values.size());
    for (int i = 0; i < values.size(); i++) {
      String where = field + "[" + i + "]";
      String value = values.get(i);
      if (value == null) {
        throw new IllegalArgumentException(where + ": must not be null");
      }
      String v = value.trim();
      int dash = v.indexOf('-');
      int low = code(where, value, dash < 0 ? v : v.substring(0, dash).trim());
      int high = dash < 0 ? low : code(where, value, v.substring(dash + 1).trim());
      if (low > high) {
        throw new IllegalArgumentException(
            where + ": range \"" + value + "\" has its start above its end");
      }
      ranges.add(new int[] {low, high});
    }
    return new ExpectedStatuses(List.copyOf(ranges));
  }

  /** As {@link #parse(String, List)}, but empty or null is {@link #NONE}. */
  public static ExpectedStatuses parseOrNone(String field, List<String> values) {
    return values == null || values.isEmpty() ? NONE : parse(field, values);
  }

  /** Whether no status is in this set. */
  public boolean isEmpty() {
    return ranges.isEmpty();
  }

  /** The lowest code in both sets, or -1 when they are disjoint. */
  public int firstShared(ExpectedStatuses other) {
    for (int code = 100; code <= 599; code++) {
      if (contains(code) && other.contains(code)) {
        return code;
      }
    }
    return -1;
  }

  /** Parses {@code "200"}, {@code "200-399"} or a comma-separated list of them. */
  public static ExpectedStatuses parse(String field, String commaSeparated) {
    return parse(field, List.of(commaSeparated.split(",")));
  }

  private static int code(String where, String value, String digits) {
    if (digits.length() != 3 || !digits.chars().allMatch(c -> c >= '0' && c <= '9')) {
      throw new IllegalArgumentException(
          where + ": \"" + value + "\" is not a status code or a range like \"200-399\"");
    }
    int code = Integer.parseInt(digits);
    if (code < 100 || code > 599) {
      throw new IllegalArgumentException(where + ": \"" + value + "\" is outside 100..599");
    }
    return code;
  }

  public boolean contains(int code) {
    for (int[] range : ranges) {
      if (code >= range[0] && code <= range[1]) {
        return true;
      }
    }
    return false;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof ExpectedStatuses other && toString().equals(other.toString());
  }

  @Override
  public int hashCode() {
    return Objects.hash(toString());
  }

  /** The canonical form, e.g. {@code [200-399, 404]}. */
  @Override
  public String toString() {
    List<String> parts = new ArrayList<>(ranges.size());
    for (int[] r : ranges) {
      parts.add(r[0] == r[1] ? Integer.toString(r[0]) : r[0] + "-" + r[1]);
    }
    return parts.toString();
  }
}
