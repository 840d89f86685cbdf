package dev.vigil.probe.transport;

import dev.vigil.probe.CheckSpec;
import dev.vigil.probe.ProbeTarget;
import dev.vigil.probe.TlsMaterial;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.ClientSSLOptions;
import io.vertx.core.net.PemKeyCertOptions;
import io.vertx.core.net.PemTrustOptions;
import io.vertx.core.net.SocketAddress;
import io.vertx.core.net.TCPSSLOptions;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The client TLS configurations a check can ask for: verifying against the JVM's CAs, trusting
 * anything, or with a check's own {@link TlsMaterial} (a CA bundle that replaces the JVM's CAs, a
 * client certificate). Vert.x keys the TLS contexts it builds by these options' content (an LRU of
 * 256 per client), so checks with the same material share one context.
 */
public final class ClientTls {

  /** Distinct materials whose options are kept; Vert.x's own context cache is bounded too. */
  private static final int KEPT = 64;

  private final ClientSSLOptions verifying =
      new ClientSSLOptions().setHostnameVerificationAlgorithm("HTTPS");
  private final ClientSSLOptions trustingAll =
      new ClientSSLOptions().setTrustAll(true).setHostnameVerificationAlgorithm("");
  private final Map<CheckSpec.Tls, ClientSSLOptions> withMaterial =
      new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<CheckSpec.Tls, ClientSSLOptions> eldest) {
          return size() > KEPT;
        }
      };

  ClientSSLOptions options(CheckSpec.Tls tls) {
    if (tls.hasMaterial()) {
      synchronized (withMaterial) {
        return withMaterial.computeIfAbsent(
            tls,
            t -> {
              ClientSSLOptions o =
                  new ClientSSLOptions()
                      .setTrustAll(t.insecureSkipVerify())
                      .setHostnameVerificationAlgorithm(t.insecureSkipVerify() ? "" : "HTTPS");
              if (!t.insecureSkipVerify() && t.material().hasCa()) {
                o.setTrustOptions(trust(t.material()));
              }
              if (t.material().hasClientCertificate()) {
                o.setKeyCertOptions(keyCert(t.material()));
              }
              return o;
            });
      }
    }
    return tls.insecureSkipVerify() ? trustingAll : verifying;
  }

  /**
   * Adds {@code material} to client options (HTTP/2, gRPC): its CA bundle as the only trust (unless
   * {@code trustAll}) and its client certificate.
   */
  public static <T extends TCPSSLOptions> T applyMaterial(
      T options, TlsMaterial material, boolean trustAll) {
    if (!trustAll && material.hasCa()) {
      options.setTrustOptions(trust(material));
    }
    if (material.hasClientCertificate()) {
      options.setKeyCertOptions(keyCert(material));
    }
    return options;
  }

  private static PemTrustOptions trust(TlsMaterial material) {
    return new PemTrustOptions().addCertValue(Buffer.buffer(material.caPem()));
  }

  private static PemKeyCertOptions keyCert(TlsMaterial material) {
    return new PemKeyCertOptions()
        .setCertValue(Buffer.buffer(material.certPem()))
        .setKeyValue(Buffer.buffer(material.keyPem()));
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
