package dev.vigil.inspect;

import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;

/** A status timestamp as people read it: the time and how long ago (or how soon) it is. */
final class Times {
  private Times() {}

  static String at(String rfc3339, Instant now) {
    Instant t;
    try {
      t = OffsetDateTime.parse(rfc3339).toInstant();
    } catch (DateTimeParseException e) {
      return rfc3339;
    }
    Duration d = Duration.between(now, t);
    String span = span(d.abs());
    return rfc3339 + (d.isNegative() ? " (" + span + " ago)" : " (in " + span + ")");
  }

  static String span(Duration d) {
    long s = d.toSeconds();
    if (s < 60) {
      return s + "s";
    }
    if (s < 3600) {
      return s / 60 + "m" + (s % 60 == 0 ? "" : s % 60 + "s");
    }
    return s / 3600 + "h" + (s % 3600 / 60 == 0 ? "" : s % 3600 / 60 + "m");
  }
}
