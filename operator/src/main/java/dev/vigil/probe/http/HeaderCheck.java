package dev.vigil.probe.http;

import dev.vigil.probe.CheckSpec;
import java.util.List;
import java.util.function.Function;

/** {@code active.http.headerMatch} over a response's headers, for both HTTP probers. */
final class HeaderCheck {
  private HeaderCheck() {}

  /**
   * The detail of the first entry a response fails ({@code header X-Ready missing}, {@code header
   * X-Ready: "no" does not match ^yes$}, or its pattern refused for its cost), or null when every
   * entry holds.
   *
   * @param values a response's values of a header name (any case), empty when absent
   * @param costs runs the patterns, and refuses one that costs too much
   */
  static String firstMismatch(
      List<CheckSpec.HeaderMatch> matches,
      Function<String, List<String>> values,
      PatternCosts costs) {
    for (CheckSpec.HeaderMatch m : matches) {
      List<String> got = values.apply(m.name());
      if (got.isEmpty()) {
        return "header " + m.name() + " missing";
      }
      String failed = m.value() == null ? null : valueMismatch(m, got, costs);
      if (failed != null) {
        return failed;
      }
    }
    return null;
  }

  /** Null when one of the header's values matches the entry's pattern. */
  private static String valueMismatch(
      CheckSpec.HeaderMatch m, List<String> got, PatternCosts costs) {
    for (String v : got) {
      PatternCosts.Found found = costs.find(m.value(), v);
      if (found.refused()) {
        return "headerMatch " + m.name() + " " + found.refusal();
      }
      if (found.found()) {
        return null;
      }
    }
    return "header "
        + m.name()
        + ": "
        + StatusLineClassifier.excerpt(got.get(0))
        + " does not match "
        + m.value().pattern();
  }
}
