package dev.vigil.ops;

import dev.vigil.probe.CheckSpec;
import dev.vigil.probe.ProbeProtocol;
import dev.vigil.probe.ProbeResult;
import dev.vigil.probe.ProbeTarget;
import dev.vigil.probe.ProtocolProber;
import dev.vigil.probe.grpc.GrpcProber;
import dev.vigil.probe.http.Http2Prober;
import dev.vigil.probe.http.HttpProber;
import dev.vigil.probe.tcp.TcpProber;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The child JVM of {@link ColdStartTlsTest}: a cold process that (optionally) runs the operator's
 * TLS warm-up, then probes every given HTTPS port at once, as the first probe round after a start
 * does, and prints one line per probe ({@code PASS|FAIL <latency ms> <detail>}) and the warm-up's
 * duration.
 *
 * <p>Arguments: {@code warm|cold timeoutMs port...}.
 */
public final class ColdStartProbes {
  private ColdStartProbes() {}

  public static void main(String[] args) throws Exception {
    boolean warm = args[0].equals("warm");
    Duration timeout = Duration.ofMillis(Long.parseLong(args[1]));
    Vertx vertx = Vertx.vertx();
    ProtocolProber prober =
        new ProtocolProber(
            new HttpProber(vertx),
            new TcpProber(vertx),
            new GrpcProber(vertx),
            new Http2Prober(vertx));
    long start = System.nanoTime();
    if (warm) {
      TlsWarmUp.runAndWait(vertx, prober, Duration.ofSeconds(20));
    }
    System.out.println("WARMUP " + (System.nanoTime() - start) / 1_000_000);
    CheckSpec spec =
        CheckSpec.builder()
            .protocol(ProbeProtocol.HTTPS)
            .timeout(timeout)
            .tls(new CheckSpec.Tls(true, null))
            .build();
    List<Future<ProbeResult>> round = new ArrayList<>();
    for (int i = 2; i < args.length; i++) {
      round.add(prober.probe(new ProbeTarget("127.0.0.1", Integer.parseInt(args[i])), spec));
    }
    Future.join(round).toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
    for (Future<ProbeResult> f : round) {
      ProbeResult r = f.result();
      System.out.println((r.passed() ? "PASS " : "FAIL ") + r.latencyMs() + " " + r.detail());
    }
    System.out.flush();
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    System.exit(0);
  }
}
