package dev.vigil.passive;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.Http2ResetFrame;
import io.netty.handler.codec.http2.Http2WindowUpdateFrame;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The OTLP/gRPC receiver's flow control, frame by frame ({@link RawHttp2Client} over TLS on
 * loopback against the real intake): a body is not read before the export holds its share of the
 * bytes in flight (docs/passive.md, "OTLP receiver"). What the server read shows in its
 * WINDOW_UPDATE frames: HTTP/2 gives a sender more room only for bytes the receiver consumed.
 */
class OtlpGrpcFlowTest {
  private static final String TOKEN = "flow-token";
  private static final long PING = 42;

  private Vertx vertx;
  private IntakeHarness harness;
  private RawHttp2Client client;

  @BeforeEach
  void setUp() {
    vertx = Vertx.vertx();
  }

  /** The intake with these limits; the caller's token is known; a client connected. */
  private void start(IntakeLimits limits) throws Exception {
    harness =
        new IntakeHarness(vertx, new SimpleMeterRegistry(), limits, System::currentTimeMillis);
    harness.reviewer.user(TOKEN, "system:serviceaccount:ingress:traefik", "shop");
    harness.intake.receiveOtlp(new BackendAddresses(), List.of(OtlpProfile.TRAEFIK));
    client = new RawHttp2Client(harness.port);
  }

  @AfterEach
  void tearDown() {
    if (client != null) {
      client.close();
    }
    if (harness != null) {
      harness.close();
    }
    vertx.close();
  }

  @Test
  void nothingOfAnExportsBodyIsReadBeforeTheExportIsAdmitted() throws Exception {
    start(IntakeLimits.defaults());
    harness.reviewer.hold = new CountDownLatch(1); // the token's review waits
    int stream = export(48 * 1024, false); // of a 1 MiB message: > half the 64 KiB window

    // a PING after the DATA: whatever the server did with the DATA (consumed, it gives the window
    // back) shows before the PING's ACK
    client.ping(PING);
    await().atMost(Duration.ofSeconds(10)).until(() -> client.pingAck(PING) >= 0);
    assertThat(client.got.subList(0, client.pingAck(PING)))
        .noneMatch(f -> f instanceof Http2WindowUpdateFrame u && u.stream().id() == stream);

    harness.reviewer.hold.countDown(); // admitted: now its body is read
    await().atMost(Duration.ofSeconds(10)).until(() -> client.windowUpdates(stream) > 0);
  }

  @Test
  void anExportOverItsCallersRateIsAnsweredAndTheRestOfItsBodyDropped() throws Exception {
    start(IntakeLimits.defaults().withRate(0.001, 1));
    int first = export(0, true); // an empty export: it takes the one export of the burst
    await().atMost(Duration.ofSeconds(10)).until(() -> grpcStatus(first) != null);
    assertThat(grpcStatus(first)).isEqualTo("0");

    int stream = export(48 * 1024, false);
    await().atMost(Duration.ofSeconds(10)).until(() -> grpcStatus(stream) != null);
    assertThat(grpcStatus(stream)).isEqualTo("8"); // RESOURCE_EXHAUSTED with RetryInfo
    // the bytes it was sent are read (and dropped): the window comes back, the connection goes on
    await().atMost(Duration.ofSeconds(10)).until(() -> client.windowUpdates(stream) > 0);
    assertThat(client.got).noneMatch(f -> f instanceof Http2ResetFrame);
  }

  /** Opens an export's stream: its headers and the first {@code bytes} of a gRPC message. */
  private int export(int bytes, boolean end) throws Exception {
    byte[] data = new byte[Math.max(5, bytes)];
    if (!end) {
      data[2] = 0x10; // gRPC prefix: not compressed, length 1 MiB
    }
    return client.send(headers(), data, end);
  }

  /** The grpc-status the server answered the stream with, or null before it did. */
  private String grpcStatus(int stream) {
    return client.header(stream, "grpc-status");
  }

  private DefaultHttp2Headers headers() {
    DefaultHttp2Headers h = new DefaultHttp2Headers();
    h.method("POST")
        .scheme("https")
        .path(OtlpReceiver.GRPC_PATH)
        .authority("localhost:" + harness.port);
    h.set("content-type", "application/grpc");
    h.set("te", "trailers");
    h.set("authorization", "Bearer " + TOKEN);
    return h;
  }
}
