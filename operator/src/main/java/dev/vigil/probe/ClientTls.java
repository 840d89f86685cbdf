package dev.vigil.probe;

import io.vertx.core.net.ClientSSLOptions;

/** The two client TLS configurations a check can ask for: verifying or trusting anything. */
final class ClientTls {

  private final ClientSSLOptions verifying =
      new ClientSSLOptions().setHostnameVerificationAlgorithm("HTTPS");
  private final ClientSSLOptions trustingAll =
      new ClientSSLOptions().setTrustAll(true).setHostnameVerificationAlgorithm("");

  ClientSSLOptions options(CheckSpec.Tls tls) {
    return tls.insecureSkipVerify() ? trustingAll : verifying;
  }

  /** The SNI name for a check: the serverName, else a Host that is a name (not an IP). */
  static String sniName(CheckSpec spec) {
    if (spec.tls().serverName() != null) {
      return spec.tls().serverName();
    }
    String host = spec.http().host();
    if (host == null) {
      return null;
    }
    int colon = host.lastIndexOf(':');
    String name = colon > 0 && host.indexOf(':') == colon ? host.substring(0, colon) : host;
    boolean literal =
        name.indexOf(':') >= 0 || name.chars().allMatch(c -> c == '.' || Character.isDigit(c));
    return literal ? null : name;
  }
}
