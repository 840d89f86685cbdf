package dev.vigil.passive;

import dev.vigil.testing.TestTls;
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
import io.netty.handler.codec.http2.DefaultHttp2HeadersFrame;
import io.netty.handler.codec.http2.DefaultHttp2PingFrame;
import io.netty.handler.codec.http2.Http2ChannelDuplexHandler;
import io.netty.handler.codec.http2.Http2DataFrame;
import io.netty.handler.codec.http2.Http2Frame;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2FrameStream;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.handler.codec.http2.Http2HeadersFrame;
import io.netty.handler.codec.http2.Http2PingFrame;
import io.netty.handler.codec.http2.Http2ResetFrame;
import io.netty.handler.codec.http2.Http2WindowUpdateFrame;
import io.netty.handler.ssl.ApplicationProtocolConfig;
import io.netty.handler.ssl.ApplicationProtocolNames;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.util.ReferenceCountUtil;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * A raw HTTP/2 client over TLS (Netty's frame codec) on loopback, for tests that look at frames:
 * out as written, every frame in kept in order. Netty's codec still keeps HTTP/2's flow control:
 * DATA beyond the window the server gave waits until the server gives more.
 */
final class RawHttp2Client implements AutoCloseable {
  final List<Http2Frame> got = new CopyOnWriteArrayList<>();
  private final EventLoopGroup group =
      new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
  private final Recorder recorder = new Recorder(got);
  final Channel channel;

  RawHttp2Client(int port) throws Exception {
    channel = connect(port);
  }

  /** Opens a stream: {@code headers} and {@code data}, ending the stream with it or not. */
  int send(Http2Headers headers, byte[] data, boolean end) throws Exception {
    return channel
        .eventLoop()
        .submit(
            () -> {
              Http2FrameStream stream = recorder.newStream();
              channel.write(new DefaultHttp2HeadersFrame(headers, false).stream(stream));
              channel.writeAndFlush(
                  new DefaultHttp2DataFrame(Unpooled.wrappedBuffer(data), end).stream(stream));
              return stream.id();
            })
        .get();
  }

  /**
   * Sends a PING with {@code payload}: the server handles frames in order, so what it did with the
   * frames before shows before the PING's ACK ({@link #pingAck}).
   */
  void ping(long payload) throws InterruptedException {
    channel.writeAndFlush(new DefaultHttp2PingFrame(payload)).sync();
  }

  /** Where in {@link #got} the ACK of the PING with {@code payload} is, or -1. */
  int pingAck(long payload) {
    for (int i = 0; i < got.size(); i++) {
      if (got.get(i) instanceof Http2PingFrame p && p.ack() && p.content() == payload) {
        return i;
      }
    }
    return -1;
  }

  /** The WINDOW_UPDATE frames the server sent for the stream: it consumed what it was sent. */
  long windowUpdates(int stream) {
    return got.stream()
        .filter(f -> f instanceof Http2WindowUpdateFrame u && u.stream().id() == stream)
        .count();
  }

  /** The value of header {@code name} in the stream's answer (headers or trailers), or null. */
  String header(int stream, String name) {
    for (Http2Frame f : got) {
      if (f instanceof Http2HeadersFrame h
          && h.stream().id() == stream
          && h.headers().get(name) != null) {
        return h.headers().get(name).toString();
      }
    }
    return null;
  }

  /** Whether the server ended the stream (END_STREAM on its last headers or data). */
  boolean ended(int stream) {
    return got.stream()
        .anyMatch(
            f ->
                (f instanceof Http2HeadersFrame h && h.stream().id() == stream && h.isEndStream())
                    || (f instanceof Http2DataFrame d
                        && d.stream().id() == stream
                        && d.isEndStream()));
  }

  /** The error codes of the RST_STREAM frames the server sent for the stream. */
  List<Long> resets(int stream) {
    return got.stream()
        .filter(f -> f instanceof Http2ResetFrame r && r.stream().id() == stream)
        .map(f -> ((Http2ResetFrame) f).errorCode())
        .toList();
  }

  @Override
  public void close() {
    channel.close();
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
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

  private Channel connect(int port) throws Exception {
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
                        tls.newHandler(ch.alloc(), "localhost", port),
                        Http2FrameCodecBuilder.forClient().build(),
                        recorder);
              }
            })
        .connect("127.0.0.1", port)
        .sync()
        .channel();
  }
}
