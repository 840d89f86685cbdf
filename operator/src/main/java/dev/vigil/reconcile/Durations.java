package dev.vigil.reconcile;

import dev.vigil.health.InvalidSettingsException;
import java.math.BigDecimal;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Go-style durations as the CRDs take them: {@code 100ms}, {@code 5s}, {@code 1m30s}, {@code 2h}.
 */
public final class Durations {
  private static final Pattern WHOLE = Pattern.compile("^(?:[0-9]+(?:\\.[0-9]+)?(?:ms|s|m|h))+$");
  private static final Pattern PART = Pattern.compile("([0-9]+(?:\\.[0-9]+)?)(ms|s|m|h)");

  private Durations() {}

  /**
   * @param field the field path, named in the error
   * @throws InvalidSettingsException when the value is not a duration
   */
  public static long millis(String field, String value) {
    if (value == null || !WHOLE.matcher(value).matches()) {
      throw new InvalidSettingsException(
          field, "must be a duration such as 100ms, 5s or 1m30s, got \"" + value + "\"");
    }
    BigDecimal total = BigDecimal.ZERO;
    Matcher m = PART.matcher(value);
    while (m.find()) {
      BigDecimal n = new BigDecimal(m.group(1));
      long unit =
          switch (m.group(2)) {
            case "ms" -> 1L;
            case "s" -> 1_000L;
            case "m" -> 60_000L;
            default -> 3_600_000L;
          };
      total = total.add(n.multiply(BigDecimal.valueOf(unit)));
    }
    return total.longValue();
  }
}
