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

  /** Longest duration string accepted; keeps CEL cost estimates low. */
  static final long DURATION_MAX_LENGTH = 32;

  /** An IANA service name, as Kubernetes requires for named ports. */
  static final String PORT_NAME = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$";

  /** A DNS-1123 subdomain, the shape of most Kubernetes object names. */
  static final String OBJECT_NAME =
      "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$";

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
