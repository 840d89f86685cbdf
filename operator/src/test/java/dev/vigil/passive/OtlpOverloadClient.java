package dev.vigil.passive;

import io.opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.grpc.client.GrpcClient;
import io.vertx.grpc.common.GrpcStatus;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The client half of the OTLP overload run (bench/otlp-load.sh, issue 33), in a JVM of its own so
 * that the server's heap is the server's: keeps {@code inFlight} OTLP/gRPC exports of Traefik
 * records (1,000 each unless told) in flight (10x the throughput run's) against {@link
 * OtlpOverloadServer} for {@code seconds}, each answer followed at once by the next export, then
 * prints the answers by gRPC status ({@code OVERLOAD}) and exits.
 *
 * <p>Arguments: port, CA file, backends, seconds, exports in flight, and optionally records per
 * export (1,000: 287 KB; 13,000 is about 3.7 MB, near the 4 MiB limit).
 */
public final class OtlpOverloadClient {
  private OtlpOverloadClient() {}

  public static void main(String[] args) throws Exception {
    int port = Integer.parseInt(args[0]);
    String caPem = Files.readString(Path.of(args[1]));
    int backends = Integer.parseInt(args[2]);
    int seconds = Integer.parseInt(args[3]);
    int inFlight = Integer.parseInt(args[4]);
    Vertx client = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(1));
    GrpcClient grpc = OtlpIntakeLoad.client(client, caPem);
    int records = args.length > 5 ? Integer.parseInt(args[5]) : 1_000;
    List<ExportLogsServiceRequest> exports = OtlpIntakeLoad.exports(backends, 16, records);
    System.out.printf(
        "  an export: %d records, %d bytes serialized%n",
        records, exports.get(0).getSerializedSize());
    Map<GrpcStatus, AtomicLong> answers = new ConcurrentHashMap<>();
    AtomicLong applied = new AtomicLong();
    OtlpIntakeLoad.running = true;
    for (int i = 0; i < inFlight; i++) {
      OtlpIntakeLoad.send(grpc, port, exports, new AtomicLong(i), applied, answers);
    }
    for (int s = 10; s <= seconds; s += 10) {
      Thread.sleep(10_000);
      System.out.printf("  t=%ds answers=%s records applied=%d%n", s, answers, applied.get());
      System.out.flush();
    }
    Thread.sleep((seconds % 10) * 1_000L);
    OtlpIntakeLoad.running = false;
    Thread.sleep(1_000);
    System.out.printf(
        "OVERLOAD inFlight=%d seconds=%d answers=%s recordsApplied=%d%n",
        inFlight, seconds, answers, applied.get());
    System.out.flush();
    System.exit(0);
  }
}
