package dev.vigil.ops;

import dev.vigil.probe.CheckSpec;
import dev.vigil.probe.ProbeProtocol;
import dev.vigil.probe.ProbeResult;
import dev.vigil.probe.ProbeTarget;
import dev.vigil.probe.Prober;
import dev.vigil.security.CertificateAuthority;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Pays for a cold JVM's first TLS handshakes before the first probe round: JSSE and Netty class
 * loading, the JDK trust store, the key exchange and the probers' SSL contexts take seconds on a
 * loaded machine, which would otherwise make the first HTTPS and gRPC-over-TLS probes after a start
 * time out and take healthy backends Down. It starts a throwaway TLS server (HTTP/1.1 and h2 by
 * ALPN) on 127.0.0.1, probes it once with every TLS configuration the probers have (HTTPS and gRPC,
 * verifying and trusting any certificate: the verifying ones fail on the throwaway certificate,
 * after building their contexts and loading the trust store), and closes it. Best effort: it never
 * fails, and it gives up after its limit.
 */
public final class TlsWarmUp {
  private static final Logger LOG = LoggerFactory.getLogger(TlsWarmUp.class);

  private TlsWarmUp() {}

  private static CertificateAuthority.Issued certificate;

  /**
   * The throwaway server's certificate, made once per process: any certificate does, and RSA key
   * generation is slow on a loaded machine (each operator start in a test JVM would pay again).
   */
  private static synchronized CertificateAuthority.Issued certificate() {
    if (certificate == null) {
      certificate =
          new CertificateAuthority("vigil-warm-up")
              .issue("localhost", List.of("localhost", "127.0.0.1"), Duration.ofDays(365));
    }
    return certificate;
  }

  /**
   * {@link #run} and wait for it, at most {@code limit} plus the time to make its certificate; for
   * the start of the operator, before the first probe round.
   */
  public static void runAndWait(Vertx vertx, Prober prober, Duration limit) {
    try {
      run(vertx, prober, limit)
          .toCompletionStage()
          .toCompletableFuture()
          .get(limit.toMillis() + 5_000, java.util.concurrent.TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
      LOG.warn("TLS warm-up did not finish: {}", e.toString());
    }
  }

  /** Warms {@code prober}'s TLS paths; completes (never fails) when done or after {@code limit}. */
  public static Future<Void> run(Vertx vertx, Prober prober, Duration limit) {
    long start = System.nanoTime();
    CertificateAuthority.Issued cert;
    try {
      cert = certificate();
    } catch (RuntimeException e) {
      LOG.warn("TLS warm-up skipped: {}", e.toString());
      return Future.succeededFuture();
    }
    HttpServer server = server(vertx, cert);
    return server
        .listen()
        .compose(
            s -> {
              List<Future<ProbeResult>> probes =
                  probeEveryTlsPath(prober, new ProbeTarget("127.0.0.1", s.actualPort()), limit);
              return Future.join(probes)
                  .onComplete(
                      ar ->
                          LOG.debug(
                              "TLS warm-up probes: {}",
                              probes.stream().map(f -> String.valueOf(f.result())).toList()));
            })
        .<Void>mapEmpty()
        .recover(e -> Future.succeededFuture())
        .eventually(
            () -> {
              prober.forget(new ProbeTarget("127.0.0.1", server.actualPort()));
              return server.close();
            })
        .onComplete(
            ar -> LOG.info("TLS warm-up took {} ms", (System.nanoTime() - start) / 1_000_000))
        .recover(e -> Future.succeededFuture());
  }

  /** A loopback TLS server: HTTP answers 200, gRPC a clean UNIMPLEMENTED. */
  private static HttpServer server(Vertx vertx, CertificateAuthority.Issued cert) {
    HttpServer server =
        vertx.createHttpServer(
            new HttpServerOptions()
                .setHost("127.0.0.1")
                .setPort(0)
                .setSsl(true)
                .setUseAlpn(true)
                .setKeyCertOptions(cert.keyCertOptions()));
    // a stream reset, rather than UNIMPLEMENTED, would be logged as an error
    server.requestHandler(
        request -> {
          String type = request.getHeader("content-type");
          if (type != null && type.startsWith("application/grpc")) {
            request
                .response()
                .putHeader("content-type", "application/grpc")
                .putTrailer("grpc-status", "12")
                .end();
          } else {
            request.response().setStatusCode(200).end();
          }
        });
    return server;
  }

  /** One probe per TLS path: HTTPS over HTTP/1.1 and h2, and gRPC, each trusting all or not. */
  private static List<Future<ProbeResult>> probeEveryTlsPath(
      Prober prober, ProbeTarget target, Duration limit) {
    List<Future<ProbeResult>> probes = new ArrayList<>();
    for (ProbeProtocol protocol : List.of(ProbeProtocol.HTTPS, ProbeProtocol.GRPC)) {
      for (boolean trustAll : new boolean[] {true, false}) {
        boolean[] http2s =
            protocol == ProbeProtocol.HTTPS ? new boolean[] {false, true} : new boolean[] {false};
        for (boolean http2 : http2s) {
          CheckSpec spec =
              CheckSpec.builder()
                  .protocol(protocol)
                  .timeout(limit)
                  .http2(http2)
                  .tls(new CheckSpec.Tls(trustAll, "localhost"))
                  .build();
          probes.add(prober.probe(target, spec));
        }
      }
    }
    return probes;
  }
}
