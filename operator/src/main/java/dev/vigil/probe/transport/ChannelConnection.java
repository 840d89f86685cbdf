package dev.vigil.probe.transport;

import dev.vigil.probe.CheckSpec;
import dev.vigil.probe.ProbeTarget;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFactory;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.channel.socket.SocketProtocolFamily;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.NetUtil;
import io.netty.util.ReferenceCountUtil;
import io.vertx.core.Completable;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.internal.ContextInternal;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.spi.SelectorProvider;

/**
 * A {@link ProbeConnection} over a bare Netty NIO channel on the calling Vert.x context's own event
 * loop: the path of plain (no TLS) probes when Vert.x runs on NIO (on epoll, {@link
 * EpollConnection}). Compared with a Vert.x {@code NetSocket} it sets no socket option beyond
 * Netty's own default ({@code TCP_NODELAY}) and the connect timeout, opens an {@code AF_INET}
 * socket for an IPv4 target (not an IPv6 socket with a mapped address), and allocates no Vert.x
 * connection, options or future per probe.
 *
 * <p>Netty calls this handler on the event loop; every receiver callback is dispatched with {@link
 * ContextInternal#emit} on the caller's context, as Vert.x's own {@code NetSocketImpl} does, so the
 * context is current in the callbacks and a result needs no hop. Read buffers are copied into one
 * reused 8 KiB array per thread (a heap buffer is fed as is), at most as far as the receiver still
 * wants them, and always released.
 */
final class ChannelConnection extends ChannelInboundHandlerAdapter implements ProbeConnection {

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
      byte[] scratch = IoScratch.current().array;
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
   * Connects with a {@link Bootstrap} on the caller's event loop: NIO channels, the socket family
   * the target's IP literal's. Host names, which a probe target never is, go to the fallback.
   */
  static final class Connector implements ProbeConnection.Connector {

    private final Vertx vertx;
    private final ProbeConnection.Connector fallback;
    private final ChannelFactory<Channel> inet;
    private final ChannelFactory<Channel> inet6;
    private final InetSocketAddress local;

    Connector(Vertx vertx, ProbeConnection.Connector fallback, SourceAddress source) {
      this.vertx = vertx;
      this.fallback = fallback;
      this.local = source.socketAddress();
      SelectorProvider provider = SelectorProvider.provider();
      this.inet = () -> new NioSocketChannel(provider, SocketProtocolFamily.INET);
      this.inet6 = () -> new NioSocketChannel(provider, SocketProtocolFamily.INET6);
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
              .disableResolver()
              .handler(connection)
              .connect(new InetSocketAddress(address, target.port()), local);
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
