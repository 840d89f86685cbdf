package dev.vigil.probe.transport;

import dev.vigil.probe.CheckSpec;
import dev.vigil.probe.ProbeTarget;
import io.vertx.core.Completable;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.ConnectOptions;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetClientOptions;
import io.vertx.core.net.NetSocket;

/**
 * A {@link ProbeConnection} over a Vert.x {@link NetSocket}: the path of every probe that uses TLS
 * (Vert.x's {@link NetClient} does the handshake, SNI and verification, see {@link ClientTls}), and
 * of plain ones where neither {@link EpollConnection} nor {@link ChannelConnection} can run (a
 * transport other than epoll or NIO, a host name instead of an IP literal).
 */
final class NetSocketConnection implements ProbeConnection {

  private final NetSocket socket;

  private NetSocketConnection(NetSocket socket) {
    this.socket = socket;
  }

  @Override
  public void write(byte[] bytes) {
    socket.write(Buffer.buffer(bytes));
  }

  @Override
  public void receive(Receiver receiver) {
    if (receiver == null) {
      socket.handler(null).exceptionHandler(null).closeHandler(null);
      return;
    }
    socket.handler(
        data -> {
          byte[] bytes = data.getBytes();
          receiver.onData(bytes, 0, bytes.length);
        });
    socket.exceptionHandler(receiver::onError);
    socket.closeHandler(v -> receiver.onClose());
  }

  @Override
  public void close() {
    socket.close();
  }

  /** Connects with one shared {@link NetClient}, TLS per check from {@link ClientTls}. */
  static final class Connector implements ProbeConnection.Connector {

    private final NetClient client;
    private final ClientTls tls = new ClientTls();

    Connector(Vertx vertx, SourceAddress source) {
      this.client =
          vertx.createNetClient(source.applyTo(new NetClientOptions().setTcpNoDelay(true)));
    }

    @Override
    public void connect(
        ProbeTarget target, CheckSpec spec, int timeoutMs, Completable<ProbeConnection> done) {
      ConnectOptions options =
          new ConnectOptions().setHost(target.ip()).setPort(target.port()).setTimeout(timeoutMs);
      if (spec.usesTls()) {
        options.setSsl(true).setSslOptions(tls.options(spec.tls()));
        String sni = ClientTls.sniName(spec);
        if (sni != null) {
          options.setSniServerName(sni);
        }
      }
      client
          .connect(options)
          .onComplete(
              ar -> {
                if (ar.succeeded()) {
                  done.succeed(new NetSocketConnection(ar.result()));
                } else {
                  done.fail(ar.cause());
                }
              });
    }

    @Override
    public Future<Void> close() {
      return client.close();
    }
  }
}
