package dev.vigil;

import dev.vigil.Lifecycle.Stage;
import dev.vigil.ops.Heartbeat;
import dev.vigil.ops.OpsServer;
import dev.vigil.ops.PoolGauges;
import dev.vigil.ops.Readiness;
import dev.vigil.runtime.PoolRuntimes;
import dev.vigil.security.CertificateAuthority;
import dev.vigil.security.Fabric8Reviewer;
import dev.vigil.security.ServingCertificate;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The wiring of the ops server (/metrics, /healthz, /readyz) and of the serving certificate it
 * shares with the outcome intake.
 */
final class OpsWiring {
  private static final Logger LOG = LoggerFactory.getLogger(OpsWiring.class);
  private static final long HEARTBEAT_STALE_MS = 10_000;
  private static final long CERTIFICATE_CHECK_MS = 10_000;

  final OpsServer server;

  /** Null unless a port serves TLS (the outcome port, or the metrics port with auth). */
  final ServingCertificate certificate;

  /** Opens the ops server and listens on its ports; a port in use fails with its flag named. */
  OpsWiring(
      StartOptions o,
      PrometheusMeterRegistry prometheus,
      MeterRegistry registry,
      PoolRuntimes runtimes,
      Readiness readiness,
      Lifecycle lifecycle) {
    OperatorConfig config = o.config;
    OperatorConfig.Metrics metrics = config.metrics();
    server = opsServer(o, prometheus, registry, runtimes, readiness);
    lifecycle.on(
        Stage.SERVING,
        "the ops server",
        () ->
            Lifecycle.awaitStopped(server.close(), "the ops server (/metrics, /healthz, /readyz)"));
    certificate =
        config.intake().port() >= 0 || metrics.auth() ? servingCertificate(o, config.tls()) : null;
    if (certificate != null) {
      lifecycle.on(Stage.SERVING, "the serving certificate", certificate::close);
    }
    if (metrics.auth()) {
      server.secure(certificate, Fabric8Reviewer.forApiServer(o.client));
    }
    listen(metrics);
  }

  private static OpsServer opsServer(
      StartOptions o,
      PrometheusMeterRegistry prometheus,
      MeterRegistry registry,
      PoolRuntimes runtimes,
      Readiness readiness) {
    return new OpsServer(
        o.vertx,
        prometheus,
        new PoolGauges(runtimes::all, registry),
        new Heartbeat(o.vertx, System::nanoTime, HEARTBEAT_STALE_MS).start(),
        readiness);
  }

  /** Listens on the metrics port and, if set, the health port; a port in use names its flag. */
  private void listen(OperatorConfig.Metrics metrics) {
    int port =
        Lifecycle.awaitStarted(server.listen(metrics.port()), "--metrics-port " + metrics.port());
    int healthPort = -1;
    if (metrics.healthPort() >= 0) {
      healthPort =
          Lifecycle.awaitStarted(
              server.listenHealth(metrics.healthPort()), "--health-port " + metrics.healthPort());
    }
    LOG.info(
        "serving /metrics{}, /healthz and /readyz on port {}{}",
        metrics.auth() ? " (TLS, authorized)" : "",
        port,
        healthPort < 0 ? "" : "; /healthz and /readyz (plain HTTP) on port " + healthPort);
  }

  /**
   * The certificate: the configured PEM files, re-read every 10 s (a rotated Secret reaches the
   * volume within the kubelet's sync period, about a minute), or, when none are configured (tests
   * and the demo; {@link OperatorConfig#parse} requires them), a throwaway certificate for
   * localhost from a CA that lives only in this process.
   */
  private static ServingCertificate servingCertificate(StartOptions o, OperatorConfig.Tls tls) {
    if (tls.given()) {
      return new ServingCertificate(o.vertx, Path.of(tls.certFile()), Path.of(tls.keyFile()))
          .checkEvery(CERTIFICATE_CHECK_MS);
    }
    try {
      Path dir = Files.createTempDirectory("vigil-tls");
      new CertificateAuthority("vigil throwaway CA")
          .issue("localhost", List.of("localhost", "127.0.0.1"), Duration.ofDays(1))
          .writeTo(dir);
      LOG.warn("no --tls-cert-file: the outcome port serves a throwaway self-signed certificate");
      return new ServingCertificate(o.vertx, dir.resolve("tls.crt"), dir.resolve("tls.key"));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
