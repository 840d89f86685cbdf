package dev.vigil.passive;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.vigil.testing.TestTls;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.http2.DefaultHttp2DataFrame;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.DefaultHttp2HeadersFrame;
import io.netty.handler.codec.http2.DefaultHttp2PingFrame;
import io.netty.handler.codec.http2.Http2ChannelDuplexHandler;
import io.netty.handler.codec.http2.Http2Frame;
import io.netty.handler.codec.http2.Http2FrameCodec;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2FrameStream;
import io.netty.handler.codec.http2.Http2HeadersFrame;
import io.netty.handler.codec.http2.Http2PingFrame;
import io.netty.handler.codec.http2.Http2ResetFrame;
import io.netty.handler.codec.http2.Http2WindowUpdateFrame;
import io.netty.handler.ssl.ApplicationProtocolConfig;
import io.netty.handler.ssl.ApplicationProtocolNames;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.util.ReferenceCountUtil;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The OTLP/gRPC receiver's flow control, frame by frame (a raw Netty HTTP/2 client over TLS on
 * loopback against the real intake): a body is not read before the export holds its share of the
 * bytes in flight (docs/passive.md, "OTLP receiver"). What the server read shows in its
 * WINDOW_UPDATE frames: HTTP/2 gives a sender more room only for bytes the receiver consumed.
 */
class OtlpGrpcFlowTest {
  private static final String TOKEN = "flow-token";
  private static final long PING = 42;

  private Vertx vertx;
  private IntakeHarness harness;
  private EventLoopGroup group;

  @BeforeEach
  void setUp() {
    vertx = Vertx.vertx();
    group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
  }

  /** The intake with these limits; the caller's token is known. */
  private void start(IntakeLimits limits) {
    harness =
        new IntakeHarness(vertx, new SimpleMeterRegistry(), limits, System::currentTimeMillis);
    harness.reviewer.user(TOKEN, "system:serviceaccount:ingress:traefik", "shop");
    harness.intake.receiveOtlp(new BackendAddresses(), List.of(OtlpProfile.TRAEFIK));
  }

  @AfterEach
  void tearDown() {
    group.shutdownGracefully(0, 1, java.util.concurrent.TimeUnit.SECONDS);
    if (harness != null) {
      harness.close();
    }
    vertx.close();
  }

  @Test
  void nothingOfAnExportsBodyIsReadBeforeTheExportIsAdmitted() throws Exception {
    start(IntakeLimits.defaults());
    harness.reviewer.hold = new CountDownLatch(1); // the token's review waits
    Client client = new Client();
    int stream = client.send(48 * 1024, false); // of a 1 MiB message: > half the 64 KiB window

    // a PING after the DATA: the server handles frames in order, so whatever it did with the DATA
    // (consumed, it gives the window back) shows before the PING's ACK
    client.channel.writeAndFlush(new DefaultHttp2PingFrame(PING)).sync();
    await().atMost(Duration.ofSeconds(10)).until(() -> pingAck(client.got) >= 0);
    assertThat(client.got.subList(0, pingAck(client.got)))
        .noneMatch(f -> f instanceof Http2WindowUpdateFrame u && u.stream().id() == stream);

    harness.reviewer.hold.countDown(); // admitted: now its body is read
    await().atMost(Duration.ofSeconds(10)).until(() -> client.windowUpdates(stream) > 0);
  }

  @Test
  void anExportOverItsCallersRateIsAnsweredAndTheRestOfItsBodyDropped() throws Exception {
    start(IntakeLimits.defaults().withRate(0.001, 1));
    Client client = new Client();
    int first = client.send(0, true); // an empty export: it takes the one export of the burst
    await().atMost(Duration.ofSeconds(10)).until(() -> client.status(first) != null);
    assertThat(client.status(first)).isEqualTo("0");

    int stream = client.send(48 * 1024, false);
    await().atMost(Duration.ofSeconds(10)).until(() -> client.status(stream) != null);
    assertThat(client.status(stream)).isEqualTo("8"); // RESOURCE_EXHAUSTED with RetryInfo
    // the bytes it was sent are read (and dropped): the window comes back, the connection goes on
    await().atMost(Duration.ofSeconds(10)).until(() -> client.windowUpdates(stream) > 0);
    assertThat(client.got).noneMatch(f -> f instanceof Http2ResetFrame);
  }

  /** A raw HTTP/2 client over TLS: frames out as written, every frame in kept in order. */
  private final class Client {
    final List<Http2Frame> got = new CopyOnWriteArrayList<>();
    final Http2FrameCodec codec = Http2FrameCodecBuilder.forClient().build();
    final Recorder recorder = new Recorder(got);
    final Channel channel;

    Client() throws Exception {
      channel = connect(codec, recorder);
    }

    /** Opens a stream: an export's headers and the first {@code bytes} of a gRPC message. */
    int send(int bytes, boolean end) throws Exception {
      return channel
          .eventLoop()
          .submit(
              () -> {
                Http2FrameStream stream = recorder.newStream();
                channel.write(new DefaultHttp2HeadersFrame(headers(), false).stream(stream));
                byte[] data = new byte[Math.max(5, bytes)];
                if (!end) {
                  data[2] = 0x10; // gRPC prefix: not compressed, length 1 MiB
                }
                channel.writeAndFlush(
                    new DefaultHttp2DataFrame(Unpooled.wrappedBuffer(data), end).stream(stream));
                return stream.id();
              })
          .get();
    }

    /** The WINDOW_UPDATE frames the server sent for the stream: it consumed what it was sent. */
    long windowUpdates(int stream) {
      return got.stream()
          .filter(f -> f instanceof Http2WindowUpdateFrame u && u.stream().id() == stream)
          .count();
    }

    /** The grpc-status the server answered the stream with, or null before it did. */
    String status(int stream) {
      for (Http2Frame f : got) {
        if (f instanceof Http2HeadersFrame h
            && h.stream().id() == stream
            && h.headers().get("grpc-status") != null) {
          return h.headers().get("grpc-status").toString();
        }
      }
      return null;
    }
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

  private static int pingAck(List<Http2Frame> got) {
    for (int i = 0; i < got.size(); i++) {
      if (got.get(i) instanceof Http2PingFrame p && p.ack() && p.content() == PING) {
        return i;
      }
    }
    return -1;
  }

  /** Keeps every frame the server sends, in order; opens the client's streams. */
  private static final class Recorder extends Http2ChannelDuplexHandler {
    private final List<Http2Frame> got;

    Recorder(List<Http2Frame> got) {
      this.got = got;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      if (msg instanceof Http2Frame f) {
        got.add(f);
      }
      ReferenceCountUtil.release(msg);
    }
  }

  private Channel connect(Http2FrameCodec codec, Recorder recorder) throws Exception {
    SslContext tls =
        SslContextBuilder.forClient()
            .trustManager(TestTls.caFile().toFile())
            .applicationProtocolConfig(
                new ApplicationProtocolConfig(
                    ApplicationProtocolConfig.Protocol.ALPN,
                    ApplicationProtocolConfig.SelectorFailureBehavior.NO_ADVERTISE,
                    ApplicationProtocolConfig.SelectedListenerFailureBehavior.ACCEPT,
                    ApplicationProtocolNames.HTTP_2))
            .build();
    return new Bootstrap()
        .group(group)
        .channel(NioSocketChannel.class)
        .handler(
            new ChannelInitializer<Channel>() {
              @Override
              protected void initChannel(Channel ch) {
                ch.pipeline()
                    .addLast(
                        tls.newHandler(ch.alloc(), "localhost", harness.port), codec, recorder);
              }
            })
        .connect("127.0.0.1", harness.port)
        .sync()
        .channel();
  }
}
