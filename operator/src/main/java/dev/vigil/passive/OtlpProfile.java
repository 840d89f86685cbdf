package dev.vigil.passive;

import dev.vigil.health.Origin;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.logs.v1.LogRecord;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Which log record attributes of one source carry a request's backend address, status, response
 * flags and duration, and how they make an outcome (docs/passive.md, "OTLP receiver"):
 *
 * <ul>
 *   <li>{@code traefik}: Traefik v3's access log over OTLP ({@code --accesslog.otlp}; its logrus
 *       fields become attributes through the otellogrus bridge): {@code ServiceAddr} ({@code
 *       ip:port}), {@code OriginStatus} (the backend's status, 0 or absent when no response came
 *       back), {@code DownstreamStatus} (what Traefik answered), {@code OriginDuration}/{@code
 *       Duration} (nanoseconds). No origin status and a 5xx answer (502, 504: connection refused,
 *       reset, timeout) is a local-origin failure.
 *   <li>{@code envoy}: {@code envoy.access_loggers.open_telemetry} with the attributes the docs ask
 *       for: {@code upstream_host} (%UPSTREAM_HOST%), {@code response_code} (%RESPONSE_CODE%),
 *       {@code response_flags} (%RESPONSE_FLAGS%), {@code duration} (%DURATION%, ms). As Envoy's
 *       outlier detector splits them: a connect failure, timeout or reset ({@code UF UT UC UR LR},
 *       and {@code URX} with one of them) is local origin, otherwise a 5xx is an upstream failure.
 *       Records Envoy's own outlier detector would not count against a host (circuit breaking
 *       {@code UO}, no healthy upstream {@code UH}, no route {@code NR}, ...) are dropped.
 *   <li>{@code custom}: attribute names from {@code --otlp-custom-profile}.
 * </ul>
 *
 * <p>Pure: no I/O, O(attributes) per record.
 */
public record OtlpProfile(
    String name,
    String addressKey,
    String statusKey,
    String answerKey,
    String flagsKey,
    String durationKey,
    long nanosPerUnit) {

  public static final OtlpProfile TRAEFIK =
      new OtlpProfile(
          "traefik", "ServiceAddr", "OriginStatus", "DownstreamStatus", null, "OriginDuration", 1);

  public static final OtlpProfile ENVOY =
      new OtlpProfile(
          "envoy", "upstream_host", "response_code", null, "response_flags", "duration", 1_000_000);

  /** Envoy response flags of failures that interrupted or prevented talking to the host. */
  static final Set<String> LOCAL_ORIGIN_FLAGS = Set.of("UF", "UT", "UC", "UR", "LR");

  /** Envoy response flags of requests no host is to blame for: dropped, as Envoy does. */
  static final Set<String> NOT_THE_HOSTS =
      Set.of("UO", "UH", "NR", "NC", "RL", "UAEX", "RLSE", "DC", "DI", "FI", "IH", "SI", "DPE");

  /** What one record says, or why it says nothing usable. */
  public sealed interface Reading permits Outcome, Dropped {}

  /** An outcome for the backend at {@code ip:port}. */
  public record Outcome(String ip, int port, boolean ok, Origin origin, long latencyMs)
      implements Reading {}

  /** A record that makes no outcome. */
  public record Dropped(OtlpDrop reason) implements Reading {}

  /** Whether a record carries this profile's address attribute (how a profile is chosen). */
  public boolean claims(LogRecord record) {
    for (KeyValue kv : record.getAttributesList()) {
      if (kv.getKey().equals(addressKey)) {
        return true;
      }
    }
    return false;
  }

  /** The record's outcome under this profile. */
  public Reading read(LogRecord record) {
    AnyValue address = null;
    AnyValue status = null;
    AnyValue answer = null;
    AnyValue flags = null;
    AnyValue duration = null;
    for (KeyValue kv : record.getAttributesList()) {
      String k = kv.getKey();
      if (k.equals(addressKey)) {
        address = kv.getValue();
      } else if (k.equals(statusKey)) {
        status = kv.getValue();
      } else if (k.equals(answerKey)) {
        answer = kv.getValue();
      } else if (k.equals(flagsKey)) {
        flags = kv.getValue();
      } else if (k.equals(durationKey)) {
        duration = kv.getValue();
      }
    }
    String[] hostPort = hostPort(text(address));
    if (hostPort == null) {
      return new Dropped(OtlpDrop.NO_ADDRESS);
    }
    int port = parsePort(hostPort[1]);
    if (port <= 0) {
      return new Dropped(OtlpDrop.NO_ADDRESS);
    }
    long latencyMs = duration == null ? -1 : nanos(duration) / 1_000_000;
    Set<String> flagSet = flags(text(flags));
    if (!java.util.Collections.disjoint(flagSet, NOT_THE_HOSTS)) {
      return new Dropped(OtlpDrop.NOT_THE_HOSTS);
    }
    if (!java.util.Collections.disjoint(flagSet, LOCAL_ORIGIN_FLAGS)) {
      return new Outcome(hostPort[0], port, false, Origin.LOCAL, latencyMs);
    }
    long code = number(status);
    if (code > 0) {
      return new Outcome(hostPort[0], port, code < 500, Origin.UPSTREAM, latencyMs);
    }
    long answered = number(answer);
    if (answerKey != null && answered >= 500) {
      // no response from the backend, and the proxy answered 5xx itself: refused, reset, timed out
      return new Outcome(hostPort[0], port, false, Origin.LOCAL, latencyMs);
    }
    return new Dropped(OtlpDrop.NO_STATUS);
  }

  /**
   * A custom profile from {@code address=KEY,status=KEY[,answer=KEY][,flags=KEY][,duration=KEY]
   * [,durationUnit=ns|us|ms|s]}; bad input names the field.
   */
  public static OtlpProfile custom(String spec) {
    Map<String, String> fields = new LinkedHashMap<>();
    for (String part : spec.split(",")) {
      int eq = part.indexOf('=');
      if (eq <= 0 || eq == part.length() - 1) {
        throw new IllegalArgumentException(
            "--otlp-custom-profile: '" + part.trim() + "' is not KEY=ATTRIBUTE");
      }
      String key = part.substring(0, eq).trim();
      if (!Set.of("address", "status", "answer", "flags", "duration", "durationUnit")
          .contains(key)) {
        throw new IllegalArgumentException(
            "--otlp-custom-profile: unknown field '"
                + key
                + "' (address, status, answer, flags, duration, durationUnit)");
      }
      fields.put(key, part.substring(eq + 1).trim());
    }
    for (String required : List.of("address", "status")) {
      if (!fields.containsKey(required)) {
        throw new IllegalArgumentException(
            "--otlp-custom-profile: field '" + required + "' is required");
      }
    }
    long unit =
        switch (fields.getOrDefault("durationUnit", "ms")) {
          case "ns" -> 1;
          case "us" -> 1_000;
          case "ms" -> 1_000_000;
          case "s" -> 1_000_000_000;
          default ->
              throw new IllegalArgumentException(
                  "--otlp-custom-profile: durationUnit must be ns, us, ms or s");
        };
    return new OtlpProfile(
        "custom",
        fields.get("address"),
        fields.get("status"),
        fields.get("answer"),
        fields.get("flags"),
        fields.get("duration"),
        unit);
  }

  private static String text(AnyValue v) {
    if (v == null) {
      return null;
    }
    return switch (v.getValueCase()) {
      case STRING_VALUE -> v.getStringValue();
      case INT_VALUE -> Long.toString(v.getIntValue());
      default -> null;
    };
  }

  private static long number(AnyValue v) {
    if (v == null) {
      return -1;
    }
    switch (v.getValueCase()) {
      case INT_VALUE:
        return v.getIntValue();
      case DOUBLE_VALUE:
        return (long) v.getDoubleValue();
      case STRING_VALUE:
        try {
          return Long.parseLong(v.getStringValue().trim());
        } catch (NumberFormatException e) {
          return -1;
        }
      default:
        return -1;
    }
  }

  /** The duration in nanoseconds: a number in this profile's unit, or Go duration text. */
  private long nanos(AnyValue v) {
    if (v.getValueCase() == AnyValue.ValueCase.STRING_VALUE) {
      String s = v.getStringValue().trim();
      long n = GoDuration.nanos(s);
      if (n >= 0) {
        return n;
      }
    }
    long n = number(v);
    return n < 0 ? -1_000_000 : n * nanosPerUnit;
  }

  /** {@code ip:port}, {@code [v6]:port} or a URL ({@code http://ip:port/...}) as host and port. */
  static String[] hostPort(String s) {
    if (s == null || s.isEmpty() || s.equals("-")) {
      return null;
    }
    int scheme = s.indexOf("://");
    if (scheme >= 0) {
      s = s.substring(scheme + 3);
      int slash = s.indexOf('/');
      if (slash >= 0) {
        s = s.substring(0, slash);
      }
    }
    if (s.startsWith("[")) {
      int close = s.indexOf(']');
      if (close < 0 || close + 1 >= s.length() || s.charAt(close + 1) != ':') {
        return null;
      }
      return new String[] {s.substring(1, close), s.substring(close + 2)};
    }
    int colon = s.lastIndexOf(':');
    if (colon <= 0 || s.indexOf(':') != colon) {
      return null;
    }
    return new String[] {s.substring(0, colon), s.substring(colon + 1)};
  }

  private static int parsePort(String s) {
    try {
      int p = Integer.parseInt(s);
      return p > 0 && p < 65536 ? p : -1;
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  /** Envoy's flags, comma separated (%RESPONSE_FLAGS%, "-" for none). */
  static Set<String> flags(String s) {
    if (s == null || s.isEmpty() || s.equals("-")) {
      return Set.of();
    }
    List<String> out = new ArrayList<>(2);
    for (String f : s.split(",")) {
      out.add(f.trim().toUpperCase(Locale.ROOT));
    }
    return Set.copyOf(out);
  }
}
