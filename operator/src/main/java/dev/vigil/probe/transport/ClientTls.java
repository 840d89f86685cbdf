package dev.vigil.probe.transport;

import dev.vigil.probe.CheckSpec;
import dev.vigil.probe.ProbeTarget;
import io.vertx.core.net.ClientSSLOptions;
import io.vertx.core.net.SocketAddress;

/** The two client TLS configurations a check can ask for: verifying or trusting anything. */
public final class ClientTls {

  private final ClientSSLOptions verifying =
      new ClientSSLOptions().setHostnameVerificationAlgorithm("HTTPS");
  private final ClientSSLOptions trustingAll =
      new ClientSSLOptions().setTrustAll(true).setHostnameVerificationAlgorithm("");

  ClientSSLOptions options(CheckSpec.Tls tls) {
    return tls.insecureSkipVerify() ? trustingAll : verifying;
  }

  /** The SNI name for a check: the serverName, else a Host that is a name (not an IP). */
  public static String sniName(CheckSpec spec) {
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

  /** The Pod's address, carrying {@code name} (null: none) for SNI and the authority. */
  public static SocketAddress address(ProbeTarget target, String name) {
    if (name == null) {
      return SocketAddress.inetSocketAddress(target.port(), target.ip());
    }
    try {
      java.net.InetAddress ip = java.net.InetAddress.getByName(target.ip()); // a literal: no DNS
      return SocketAddress.inetSocketAddress(
          new java.net.InetSocketAddress(
              java.net.InetAddress.getByAddress(name, ip.getAddress()), target.port()));
    } catch (java.net.UnknownHostException e) {
      throw new IllegalArgumentException("not an IP address: " + target.ip(), e);
    }
  }
}
