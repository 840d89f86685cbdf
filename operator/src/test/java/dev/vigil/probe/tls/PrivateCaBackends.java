package dev.vigil.probe.tls;

import dev.vigil.probe.LoopbackServers;
import dev.vigil.probe.TlsMaterial;
import dev.vigil.security.CertificateAuthority;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.ClientAuth;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.net.NetServerOptions;
import io.vertx.core.net.PemTrustOptions;
import io.vertx.grpc.server.GrpcServer;
import java.time.Duration;
import java.util.List;

/**
 * Backends whose certificates a private CA signed (for 127.0.0.1 and "backend.test"), on real
 * loopback servers: HTTPS (HTTP/1.1 and h2 by ALPN), gRPC over TLS and a TLS echo for TCP; each
 * optionally demanding a client certificate that a second private CA signed (mTLS).
 */
public final class PrivateCaBackends {
  public static final String NAME = "backend.test";

  private final CertificateAuthority serverCa = new CertificateAuthority("backend-ca");
  private final CertificateAuthority clientCa = new CertificateAuthority("probe-client-ca");
  private final CertificateAuthority.Issued serving =
      serverCa.issue(NAME, List.of(NAME, "127.0.0.1"), Duration.ofDays(1));
  private final LoopbackServers servers;

  public PrivateCaBackends(LoopbackServers servers) {
    this.servers = servers;
  }

  /** The serving CA's certificate: the bundle that verifies these backends. */
  public String caPem() {
    return serverCa.caPem();
  }

  /** A client certificate the mTLS backends accept. */
  public CertificateAuthority.Issued clientCertificate() {
    return clientCa.issueClient("vigil-probe", Duration.ofDays(1));
  }

  /** A client certificate from a CA the backends do not trust. */
  public static CertificateAuthority.Issued strangerCertificate() {
    return new CertificateAuthority("stranger").issueClient("stranger", Duration.ofDays(1));
  }

  /** The bundle, and with {@code client} its certificate and key. */
  public TlsMaterial material(CertificateAuthority.Issued client) {
    return client == null
        ? new TlsMaterial(caPem(), null, null)
        : new TlsMaterial(caPem(), client.certPem(), client.keyPem());
  }

  /** An HTTPS server (HTTP/1.1 and h2) answering 200 "ok" to every request; returns its port. */
  public int https(boolean mutual) {
    HttpServerOptions options =
        new HttpServerOptions()
            .setSsl(true)
            .setUseAlpn(true)
            .setKeyCertOptions(serving.keyCertOptions());
    mutualIf(options, mutual);
    return servers.http(
        options, server -> server.requestHandler(r -> r.response().setStatusCode(200).end("ok")));
  }

  /** A gRPC server over TLS whose health service answers SERVING; returns its port. */
  public int grpc(boolean mutual) {
    GrpcServer grpc = LoopbackServers.serving(servers.vertx());
    HttpServerOptions options =
        new HttpServerOptions()
            .setSsl(true)
            .setUseAlpn(true)
            .setKeyCertOptions(serving.keyCertOptions());
    mutualIf(options, mutual);
    return servers.http(options, server -> server.requestHandler(grpc));
  }

  /** A TLS server that echoes what it reads (TCP with tls, send/expect); returns its port. */
  public int tlsEcho(boolean mutual) {
    NetServerOptions options =
        new NetServerOptions().setSsl(true).setKeyCertOptions(serving.keyCertOptions());
    if (mutual) {
      options
          .setClientAuth(ClientAuth.REQUIRED)
          .setTrustOptions(new PemTrustOptions().addCertValue(Buffer.buffer(clientCa.caPem())));
    }
    return servers.raw(options, socket -> socket.handler(socket::write));
  }

  private void mutualIf(HttpServerOptions options, boolean mutual) {
    if (mutual) {
      options
          .setClientAuth(ClientAuth.REQUIRED)
          .setTrustOptions(new PemTrustOptions().addCertValue(Buffer.buffer(clientCa.caPem())));
    }
  }
}
