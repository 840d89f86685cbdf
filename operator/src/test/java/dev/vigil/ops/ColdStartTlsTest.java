package dev.vigil.ops;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.probe.LoopbackServers;
import dev.vigil.security.CertificateAuthority;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServerOptions;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A cold start's first HTTPS round passes against healthy backends (issue 18): a fresh JVM (its
 * JSSE, Netty and trust store untouched) runs {@link TlsWarmUp} as the operator does at start, then
 * probes ten healthy HTTPS backends at once with the default 2 s deadline; every probe must pass.
 * The backends live in this JVM, so nothing they load warms the prober's process.
 */
class ColdStartTlsTest {
  private static final int BACKENDS = 10;
  private static final long DEADLINE_MS = 2_000; // the default active.timeout

  static Vertx vertx;
  static final List<Integer> ports = new ArrayList<>();

  @BeforeAll
  static void start() throws Exception {
    vertx = Vertx.vertx();
    CertificateAuthority.Issued cert =
        new CertificateAuthority("test-ca")
            .issue("localhost", List.of("localhost", "127.0.0.1"), Duration.ofHours(1));
    LoopbackServers servers = new LoopbackServers(vertx);
    for (int i = 0; i < BACKENDS; i++) {
      ports.add(
          servers.http(
              new HttpServerOptions().setSsl(true).setKeyCertOptions(cert.keyCertOptions()),
              server -> server.requestHandler(r -> r.response().setStatusCode(200).end("ok"))));
    }
    // Healthy backends are warm: one handshake with each before the cold prober starts.
    io.vertx.core.http.HttpClient client =
        vertx.createHttpClient(
            new io.vertx.core.http.HttpClientOptions().setSsl(true).setTrustAll(true));
    for (int port : ports) {
      client
          .request(io.vertx.core.http.HttpMethod.GET, port, "127.0.0.1", "/")
          .compose(r -> r.send())
          .compose(r -> r.body())
          .toCompletionStage()
          .toCompletableFuture()
          .get(30, TimeUnit.SECONDS);
    }
    client.close();
  }

  @AfterAll
  static void stop() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  static List<String> child(String mode) throws Exception {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(ColdStartProbes.class.getName());
    command.add(mode);
    command.add(Long.toString(DEADLINE_MS));
    ports.forEach(p -> command.add(Integer.toString(p)));
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    List<String> lines = new ArrayList<>();
    try (BufferedReader in =
        new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line; (line = in.readLine()) != null; ) {
        lines.add(line);
      }
    }
    assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as("child output %s", lines).isZero();
    return lines;
  }

  @Test
  void aColdStartsFirstHttpsRoundPassesAgainstHealthyBackends() throws Exception {
    List<String> lines = child("warm");
    List<String> probes = lines.stream().filter(l -> l.matches("(PASS|FAIL) .*")).toList();
    System.out.println("ColdStartTlsTest (warm start): " + lines);
    assertThat(probes).hasSize(BACKENDS);
    assertThat(probes)
        .as("every first-round probe of a warmed cold start")
        .allMatch(l -> l.startsWith("PASS "));
  }
}
