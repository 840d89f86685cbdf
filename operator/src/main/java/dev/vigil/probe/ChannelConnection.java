package dev.vigil.probe;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFactory;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.channel.epoll.EpollChannelOption;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.socket.SocketProtocolFamily;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.NetUtil;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.FastThreadLocal;
import io.vertx.core.Completable;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.impl.transports.EpollTransport;
import io.vertx.core.impl.transports.NioTransport;
import io.vertx.core.internal.ContextInternal;
import io.vertx.core.internal.VertxInternal;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.spi.SelectorProvider;

/**
 * A {@link ProbeConnection} over a bare Netty channel on the calling Vert.x context's own event
 * loop: the path of plain (no TLS) probes. Compared with a Vert.x {@code NetSocket} it sets no
 * socket option beyond Netty's own default ({@code TCP_NODELAY}), the connect timeout and, on epoll
 * for a probe that writes first, {@code TCP_QUICKACK} off ({@link Connector#sendsFirst}), opens an
 * {@code AF_INET} socket for an IPv4 target (not an IPv6 socket with a mapped address), and
 * allocates no Vert.x connection, options or future per probe. What Netty's channel does for itself
 * stays ({@code bench/profiles/syscalls-netty.md}).
 *
 * <p>Netty calls this handler on the event loop; every receiver callback is dispatched with {@link
 * ContextInternal#emit} on the caller's context, as Vert.x's own {@code NetSocketImpl} does, so the
 * context is current in the callbacks and a result needs no hop. Read buffers are copied into one
 * reused 8 KiB array per thread (a heap buffer is fed as is), at most as far as the receiver still
 * wants them, and always released.
 */
final class ChannelConnection extends ChannelInboundHandlerAdapter implements ProbeConnection {

  private static final int CHUNK = 8 * 1024;
  private static final FastThreadLocal<byte[]> SCRATCH =
      new FastThreadLocal<>() {
        @Override
        protected byte[] initialValue() {
          return new byte[CHUNK];
        }
      };

  private final ContextInternal context;
  private final Handler<ByteBuf> onRead = this::read;
  private final Handler<Throwable> onFailure = this::failed;
  private final Handler<Void> onInactive = v -> closed();
  private Channel channel;
  private Receiver receiver;

  private ChannelConnection(ContextInternal context) {
    this.context = context;
  }

  /** The Netty channel (for tests: its socket family and options). */
  Channel channel() {
    return channel;
  }

  @Override
  public void write(byte[] bytes) {
    channel.writeAndFlush(Unpooled.wrappedBuffer(bytes), channel.voidPromise());
  }

  @Override
  public void receive(Receiver receiver) {
    this.receiver = receiver;
  }

  @Override
  public void close() {
    channel.close();
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (msg instanceof ByteBuf buf) {
      context.emit(buf, onRead);
    } else {
      ReferenceCountUtil.release(msg);
    }
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    context.emit(cause, onFailure);
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    context.emit(null, onInactive);
  }

  private void read(ByteBuf buf) {
    try {
      Receiver r = receiver;
      if (r == null) {
        return;
      }
      if (buf.hasArray()) {
        r.onData(buf.array(), buf.arrayOffset() + buf.readerIndex(), buf.readableBytes());
        return;
      }
      byte[] scratch = SCRATCH.get();
      int index = buf.readerIndex();
      int end = buf.writerIndex();
      while (index < end && receiver == r) {
        int n = Math.min(scratch.length, end - index);
        buf.getBytes(index, scratch, 0, n);
        index += n;
        r.onData(scratch, 0, n);
      }
    } finally {
      buf.release();
    }
  }

  private void failed(Throwable cause) {
    Receiver r = receiver;
    if (r != null) {
      r.onError(cause);
    }
    channel.close(); // as Vert.x closes a connection after an exception
  }

  private void closed() {
    Receiver r = receiver;
    if (r != null) {
      r.onClose();
    }
  }

  /**
   * Connects with a {@link Bootstrap} on the caller's event loop; the channel class follows
   * Vert.x's transport (epoll or NIO) and the socket family the target's IP literal.
   */
  static final class Connector implements ProbeConnection.Connector {

    private final Vertx vertx;
    private final boolean epoll;
    private final ProbeConnection.Connector fallback;
    private final ChannelFactory<Channel> inet;
    private final ChannelFactory<Channel> inet6;

    private Connector(Vertx vertx, boolean epoll, ProbeConnection.Connector fallback) {
      this.vertx = vertx;
      this.epoll = epoll;
      this.fallback = fallback;
      this.inet = factory(epoll, SocketProtocolFamily.INET);
      this.inet6 = factory(epoll, SocketProtocolFamily.INET6);
    }

    /**
     * Channels on {@code vertx}'s loops when its transport is epoll or NIO (the two a Vert.x on
     * Linux runs; io_uring or kqueue loops take other channel classes), else {@code fallback}. Host
     * names, which a probe target never is, also go to {@code fallback}.
     */
    static ProbeConnection.Connector create(Vertx vertx, ProbeConnection.Connector fallback) {
      Object transport = ((VertxInternal) vertx).transport();
      if (transport instanceof EpollTransport) {
        return new Connector(vertx, true, fallback);
      }
      if (transport instanceof NioTransport) {
        return new Connector(vertx, false, fallback);
      }
      return fallback;
    }

    private static ChannelFactory<Channel> factory(boolean epoll, SocketProtocolFamily family) {
      if (epoll) {
        return () -> new EpollSocketChannel(family);
      }
      SelectorProvider provider = SelectorProvider.provider();
      return () -> new NioSocketChannel(provider, family);
    }

    /**
     * Whether the probe writes as soon as it is connected: HTTP and WebSocket requests, TCP checks
     * with {@code send}. Only then is the handshake's last ACK held back ({@code TCP_QUICKACK} off,
     * as HAProxy does for a connection with data to send) so that it rides on the request: 2
     * loopback segments fewer per probe (10 -> 8, HAProxy 7.9; {@code bench/profiles/segments.md}).
     * A server that speaks first would wait for that ACK to accept, so a connect-only or
     * expect-only TCP check keeps the immediate ACK.
     */
    static boolean sendsFirst(CheckSpec spec) {
      return spec.protocol() != Protocol.TCP || spec.tcp().send() != null;
    }

    /** Whether channels are epoll ones (else NIO). */
    boolean epoll() {
      return epoll;
    }

    @Override
    public void connect(
        ProbeTarget target, CheckSpec spec, int timeoutMs, Completable<ProbeConnection> done) {
      InetAddress address = NetUtil.createInetAddressFromIpAddressString(target.ip());
      if (address == null) {
        fallback.connect(target, spec, timeoutMs, done);
        return;
      }
      ContextInternal context = ContextInternal.current();
      if (context == null) {
        context = (ContextInternal) vertx.getOrCreateContext();
      }
      ChannelConnection connection = new ChannelConnection(context);
      ContextInternal on = context;
      ChannelFuture connecting =
          new Bootstrap()
              .group(context.nettyEventLoop())
              .channelFactory(address instanceof Inet4Address ? inet : inet6)
              .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, timeoutMs)
              .option(EpollChannelOption.TCP_QUICKACK, epoll && sendsFirst(spec) ? false : null)
              .disableResolver()
              .handler(connection)
              .connect(new InetSocketAddress(address, target.port()));
      connection.channel = connecting.channel();
      connecting.addListener(
          (ChannelFuture f) ->
              on.emit(
                  f,
                  result -> {
                    if (result.isSuccess()) {
                      done.succeed(connection);
                    } else {
                      done.fail(result.cause());
                    }
                  }));
    }
  }
}
