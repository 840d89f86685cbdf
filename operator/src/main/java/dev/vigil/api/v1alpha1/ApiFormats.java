package dev.vigil.api.v1alpha1;

/** Patterns and limits shared by the schema annotations of the v1alpha1 API. */
final class ApiFormats {

  /** A Go-style duration made of positive parts, e.g. {@code 5s}, {@code 250ms}, {@code 1m30s}. */
  static final String DURATION = "^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$";

  /**
   * {@link #DURATION} as a CEL raw string. Every rule that calls {@code duration()} on a field
   * first checks the field matches it: a value that is no duration (e.g. {@code -2s} or {@code 2
   * seconds}) then gets only the schema's pattern error, not a CEL conversion error or a comparison
   * with another field it cannot be compared with.
   */
  static final String DURATION_CEL = "r'" + DURATION + "'";

  /**
   * CEL prefix for a rule on a duration field: a value that is no {@link #DURATION} passes the rule
   * (the schema's pattern reports it), so {@code duration(self)} never sees it.
   */
  static final String IF_DURATION = "!self.matches(" + DURATION_CEL + ") || ";

  /** CEL: a duration above zero. */
  static final String POSITIVE_DURATION_RULE = IF_DURATION + "duration(self) > duration('0s')";

  /** CEL: a duration of at least 100ms, the shortest probe or sweep period. */
  static final String AT_LEAST_100MS_RULE = IF_DURATION + "duration(self) >= duration('100ms')";

  /** An HTTP status ({@code 200}) or an inclusive range of them ({@code 200-399}), 100..599. */
  static final String STATUS_RANGE = "^[1-5][0-9]{2}(-[1-5][0-9]{2})?$";

  /** Longest {@link #STATUS_RANGE}. */
  static final long STATUS_RANGE_MAX_LENGTH = 7;

  /** CEL over a list of {@link #STATUS_RANGE}s: each range has low <= high. */
  static final String STATUS_RANGES_ORDERED_RULE =
      "self.all(s, size(s) == 3 || s.substring(0, 3) <= s.substring(4, 7))";

  /** Longest duration string accepted; keeps CEL cost estimates low. */
  static final long DURATION_MAX_LENGTH = 32;

  /** An IANA service name, as Kubernetes requires for named ports. */
  static final String PORT_NAME = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$";

  /** A DNS-1123 subdomain, the shape of most Kubernetes object names. */
  static final String OBJECT_NAME =
      "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$";

  /** A DNS name: dot-separated labels of letters, digits and '-', an optional final dot. */
  static final String DNS_NAME =
      "^[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?(\\.[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?)*\\.?$";

  /** A DNS-1035 label, the shape of a Service name. */
  static final String SERVICE_NAME = "^[a-z]([-a-z0-9]*[a-z0-9])?$";

  /** CEL: an int-or-string port is 1..65535 or an IANA service name of at most 15 characters. */
  static final String PORT_RULE =
      "type(self) == int ? self >= 1 && self <= 65535"
          + " : size(self) <= 15 && self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')"
          + " && self.matches('[a-z]') && !self.contains('--')";

  static final String PORT_RULE_MESSAGE =
      "must be a port number (1-65535) or a port name (at most 15 lowercase letters, digits and"
          + " '-', with at least one letter)";

  /**
   * CEL for an int-or-string port inside a list: the same number range, but only the length of a
   * name. An int-or-string has no maxLength, so the API server estimates every operation on it at
   * the largest request size: with the regular expressions of {@link #PORT_RULE}, 64 ports exceeded
   * the CRD's CEL cost budget 24 times over (apiextensions-apiserver v0.37.2 validation); even
   * {@code type(self)} alone allows only 16 ports. The reconciler checks the name's shape.
   */
  static final String PORT_IN_LIST_RULE =
      "type(self) == int ? self >= 1 && self <= 65535 : size(self) >= 1 && size(self) <= 15";

  static final String PORT_IN_LIST_RULE_MESSAGE =
      "must be a port number (1-65535) or a port name of at most 15 characters";

  private ApiFormats() {}
}
