package dev.vigil.probe.http;

import dev.vigil.probe.CheckSpec;
import java.util.List;

/** {@code active.http.headerMatch} over a response's headers, for both HTTP probers. */
final class HeaderCheck {
  private HeaderCheck() {}

  /**
   * The detail of the first entry a response fails ({@code header X-Ready missing}, {@code header
   * X-Ready: "no" does not match ^yes$}), or null when every entry holds.
   *
   * @param values a response's values of a header name (any case), empty when absent
   */
  static String firstMismatch(
      List<CheckSpec.HeaderMatch> matches,
      java.util.function.Function<String, List<String>> values) {
    for (CheckSpec.HeaderMatch m : matches) {
      List<String> got = values.apply(m.name());
      if (got.isEmpty()) {
        return "header " + m.name() + " missing";
      }
      if (m.value() != null && got.stream().noneMatch(v -> m.value().matcher(v).find())) {
        return "header "
            + m.name()
            + ": "
            + StatusLineClassifier.excerpt(got.get(0))
            + " does not match "
            + m.value().pattern();
      }
    }
    return null;
  }
}
