package dev.vigil.probe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.netty.buffer.AbstractByteBuf;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelOption;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.ResourceLeakDetector;
import io.vertx.core.Context;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.internal.ContextInternal;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.NetServerOptions;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Field;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Plain probes over a bare Netty channel ({@link ChannelConnection}), on both transports a Vert.x
 * on Linux runs: the socket family follows the target's IP literal, callbacks run on the caller's
 * context and loop, read buffers are released, and whatever is not an IP literal goes to the
 * fallback.
 */
class ChannelConnectionTest {

  static final String OK = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";

  Vertx vertx;
  LoopbackServers servers;
  HttpProber prober;

  static Stream<Arguments> transports() {
    return Stream.of(Arguments.of(Named.of("NIO", false)), Arguments.of(Named.of("epoll", true)));
  }

  void start(boolean epoll) {
    vertx = Vertx.vertx(new VertxOptions().setPreferNativeTransport(epoll));
    assertThat(vertx.isNativeTransportEnabled())
        .as("native transport: %s", vertx.unavailableNativeTransportCause())
        .isEqualTo(epoll);
    servers = new LoopbackServers(vertx);
    prober = new HttpProber(vertx);
  }

  @AfterEach
  void stop() {
    if (vertx != null) {
      LoopbackServers.await(prober.close());
      servers.close();
      LoopbackServers.await(vertx.close());
    }
  }

  ProbeResult probe(Context on, ProbeTarget target, CheckSpec spec) {
    Promise<ProbeResult> promise = Promise.promise();
    on.runOnContext(v -> prober.probe(target, spec).onComplete(promise));
    return LoopbackServers.await(promise.future());
  }

  static CheckSpec reuse() {
    return CheckSpec.builder().timeout(Duration.ofSeconds(3)).reuseConnection(true).build();
  }

  /**
   * The local addresses of the connections in a /proc/net/tcp* table from {@code localPort} to
   * {@code remotePort} (the table is the whole machine's: only the pair of ports is ours).
   */
  static List<String> localSockets(String table, int localPort, int remotePort) throws IOException {
    String local = String.format(Locale.ROOT, ":%04X", localPort);
    String remote = String.format(Locale.ROOT, ":%04X", remotePort);
    return Files.readAllLines(Path.of("/proc/net", table)).stream()
        .skip(1)
        .map(line -> line.trim().split("\\s+"))
        .filter(f -> f[1].endsWith(local) && f[2].endsWith(remote))
        .map(f -> f[1])
        .toList();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("transports")
  void anIpv4TargetGetsAnInetSocketNotAMappedIpv6One(boolean epoll) throws IOException {
    assumeTrue(Files.exists(Path.of("/proc/net/tcp6")), "Linux /proc/net tables");
    start(epoll);
    List<Integer> clientPorts = new CopyOnWriteArrayList<>();
    int port =
        servers.raw(
            c -> {
              clientPorts.add(c.remoteAddress().port());
              c.handler(b -> c.write(OK));
            });

    ProbeResult result =
        probe(vertx.getOrCreateContext(), new ProbeTarget("127.0.0.1", port), reuse());

    assertThat(result.passed()).as("%s", result).isTrue();
    assertThat(prober.idleConnections()).as("the connection stays open for reuse").isEqualTo(1);
    assertThat(clientPorts).hasSize(1);
    assertThat(localSockets("tcp", clientPorts.get(0), port))
        .containsExactly(hexPort(clientPorts, 0));
    assertThat(localSockets("tcp6", clientPorts.get(0), port))
        .as("no IPv6 socket with a mapped IPv4 address")
        .isEmpty();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("transports")
  void aTcpCheckGoesOverAnInetSocketToo(boolean epoll) {
    assumeTrue(Files.exists(Path.of("/proc/net/tcp6")), "Linux /proc/net tables");
    start(epoll);
    TcpProber tcp = new TcpProber(vertx);
    List<String> inet = new CopyOnWriteArrayList<>();
    List<String> inet6 = new CopyOnWriteArrayList<>();
    int[] serverPort = {0};
    serverPort[0] =
        servers.raw(
            c ->
                c.handler(
                    b -> {
                      // the client's socket, looked up while the check waits for the reply
                      int client = c.remoteAddress().port();
                      try {
                        inet.addAll(localSockets("tcp", client, serverPort[0]));
                        inet6.addAll(localSockets("tcp6", client, serverPort[0]));
                      } catch (IOException e) {
                        inet.add(e.toString());
                      }
                      inet.add("client port " + client);
                      c.write("+PONG");
                    }));
    int port = serverPort[0];
    CheckSpec ping =
        CheckSpec.builder()
            .protocol(Protocol.TCP)
            .timeout(Duration.ofSeconds(3))
            .tcp(new CheckSpec.Tcp("PING\r\n", "+PONG"))
            .build();
    Promise<ProbeResult> promise = Promise.promise();
    vertx
        .getOrCreateContext()
        .runOnContext(v -> tcp.probe(new ProbeTarget("127.0.0.1", port), ping).onComplete(promise));
    ProbeResult result = LoopbackServers.await(promise.future());
    LoopbackServers.await(tcp.close());

    assertThat(result.passed()).as("%s", result).isTrue();
    assertThat(inet).hasSize(2);
    int client = Integer.parseInt(inet.get(1).substring("client port ".length()));
    assertThat(inet).containsExactly(hexPort(List.of(client), 0), "client port " + client);
    assertThat(inet6).isEmpty();
  }

  /**
   * On epoll a probe that writes first holds back the handshake's last ACK so that it rides on the
   * request ({@code TCP_QUICKACK} off): right after the connect, before anything is written, the
   * server's side of the connection is still half-open ({@code SYN_RECV}, 03 in /proc/net/tcp; the
   * kernel holds such an ACK for up to 200 ms). A connect-only TCP check keeps the immediate ACK
   * (the server's side {@code ESTABLISHED}, 01), which a server that speaks first waits for; NIO
   * sets nothing.
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource("transports")
  void theHandshakeAckWaitsForTheRequestOnlyWhenTheProbeWritesFirst(boolean epoll)
      throws Exception {
    assumeTrue(Files.exists(Path.of("/proc/net/tcp")), "Linux /proc/net tables");
    start(epoll);
    int port = servers.replying(OK);
    ProbeConnection.Connector connector =
        ChannelConnection.Connector.create(
            vertx, (target, spec, timeoutMs, done) -> done.fail(new AssertionError("fallback")));
    CheckSpec http = CheckSpec.builder().build();
    CheckSpec tcpSend =
        CheckSpec.builder().protocol(Protocol.TCP).tcp(new CheckSpec.Tcp("PING\r\n", null)).build();
    CheckSpec tcpConnect = CheckSpec.builder().protocol(Protocol.TCP).build();
    List<String> serverSide = new CopyOnWriteArrayList<>();
    for (CheckSpec spec : List.of(http, tcpSend, tcpConnect)) {
      CompletableFuture<Void> looked = new CompletableFuture<>();
      vertx
          .getOrCreateContext()
          .runOnContext(
              v ->
                  connector.connect(
                      new ProbeTarget("127.0.0.1", port),
                      spec,
                      2000,
                      (conn, failure) -> {
                        try {
                          if (failure != null) {
                            throw failure;
                          }
                          int client =
                              ((InetSocketAddress)
                                      ((ChannelConnection) conn).channel().localAddress())
                                  .getPort();
                          serverSide.add(spec.protocol() + " " + socketStates(port, client));
                          conn.close();
                          looked.complete(null);
                        } catch (Throwable t) {
                          looked.completeExceptionally(t);
                        }
                      }));
      looked.get(5, TimeUnit.SECONDS);
    }

    assertThat(serverSide)
        .containsExactly(
            "HTTP " + (epoll ? "[03]" : "[01]"), "TCP " + (epoll ? "[03]" : "[01]"), "TCP [01]");
    assertThat(ChannelConnection.Connector.sendsFirst(http)).isTrue();
    assertThat(
            ChannelConnection.Connector.sendsFirst(
                CheckSpec.builder().protocol(Protocol.WEBSOCKET).build()))
        .isTrue();
    assertThat(ChannelConnection.Connector.sendsFirst(tcpSend)).isTrue();
    assertThat(ChannelConnection.Connector.sendsFirst(tcpConnect)).isFalse();
  }

  /**
   * The TCP states (hex, as /proc/net/tcp and tcp6 have them) of the sockets from {@code localPort}
   * to {@code remotePort}.
   */
  static List<String> socketStates(int localPort, int remotePort) throws IOException {
    String local = String.format(Locale.ROOT, ":%04X", localPort);
    String remote = String.format(Locale.ROOT, ":%04X", remotePort);
    return Stream.of("tcp", "tcp6")
        .flatMap(
            table -> {
              try {
                return Files.readAllLines(Path.of("/proc/net", table)).stream().skip(1);
              } catch (IOException e) {
                throw new UncheckedIOException(e);
              }
            })
        .map(line -> line.trim().split("\\s+"))
        .filter(f -> f[1].endsWith(local) && f[2].endsWith(remote))
        .map(f -> f[3])
        .toList();
  }

  static String hexPort(List<Integer> ports, int i) {
    return String.format(Locale.ROOT, "0100007F:%04X", ports.get(i));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("transports")
  void anIpv6TargetGetsAnInet6Socket(boolean epoll) throws Exception {
    assumeTrue(
        NetworkInterface.getByInetAddress(InetAddress.getByName("::1")) != null, "IPv6 loopback");
    start(epoll);
    List<Integer> clientPorts = new CopyOnWriteArrayList<>();
    NetServer server = vertx.createNetServer(new NetServerOptions().setHost("::1").setPort(0));
    server.connectHandler(
        c -> {
          clientPorts.add(c.remoteAddress().port());
          c.handler(b -> c.write(OK));
        });
    LoopbackServers.await(server.listen());
    int port = server.actualPort();
    try {
      ProbeResult result =
          probe(vertx.getOrCreateContext(), new ProbeTarget("::1", server.actualPort()), reuse());

      assertThat(result.passed()).as("%s", result).isTrue();
      assertThat(clientPorts).hasSize(1);
      assertThat(localSockets("tcp6", clientPorts.get(0), port))
          .containsExactly(
              String.format(
                  Locale.ROOT, "00000000000000000000000001000000:%04X", clientPorts.get(0)));
      assertThat(localSockets("tcp", clientPorts.get(0), port)).isEmpty();
    } finally {
      LoopbackServers.await(server.close());
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("transports")
  void callbacksRunOnTheCallersContextAndLoop(boolean epoll) throws Exception {
    start(epoll);
    int port = servers.replying(OK);
    ProbeConnection.Connector fallback =
        (target, spec, timeoutMs, done) -> done.fail(new AssertionError("fallback used"));
    ProbeConnection.Connector connector = ChannelConnection.Connector.create(vertx, fallback);
    assertThat(connector).isInstanceOf(ChannelConnection.Connector.class);
    assertThat(((ChannelConnection.Connector) connector).epoll()).isEqualTo(epoll);
    // two contexts, most likely on two loops: each connection lives on its caller's
    Context first = vertx.getOrCreateContext();
    Context second = vertx.getOrCreateContext();
    for (Context ctx : List.of(first, second)) {
      List<String> events = new CopyOnWriteArrayList<>();
      CompletableFuture<Void> closed = new CompletableFuture<>();
      ctx.runOnContext(
          v ->
              connector.connect(
                  new ProbeTarget("127.0.0.1", port),
                  CheckSpec.builder().build(),
                  2000,
                  (conn, failure) -> {
                    events.add("connected " + (Vertx.currentContext() == ctx) + " " + failure);
                    ChannelConnection c = (ChannelConnection) conn;
                    events.add("class " + c.channel().getClass().getSimpleName());
                    events.add(
                        "loop "
                            + (c.channel().eventLoop()
                                == ((ContextInternal) ctx).nettyEventLoop()));
                    events.add(
                        "nodelay " + c.channel().config().getOption(ChannelOption.TCP_NODELAY));
                    conn.receive(
                        new ProbeConnection.Receiver() {
                          @Override
                          public void onData(byte[] bytes, int offset, int length) {
                            events.add(
                                "data "
                                    + (Vertx.currentContext() == ctx)
                                    + " "
                                    + new String(bytes, offset, length, StandardCharsets.US_ASCII)
                                        .lines()
                                        .findFirst()
                                        .orElse(""));
                          }

                          @Override
                          public void onError(Throwable t) {
                            events.add("error " + t);
                          }

                          @Override
                          public void onClose() {
                            events.add("close " + (Vertx.currentContext() == ctx));
                            closed.complete(null);
                          }
                        });
                    conn.write(
                        "GET / HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.UTF_8));
                  }));
      closed.get(5, TimeUnit.SECONDS);

      String channelClass =
          epoll ? EpollSocketChannel.class.getSimpleName() : NioSocketChannel.class.getSimpleName();
      assertThat(events)
          .containsExactly(
              "connected true null",
              "class " + channelClass,
              "loop true",
              "nodelay true",
              "data true HTTP/1.1 200 OK",
              "close true");
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("transports")
  void aProbeCompletesOnTheCallersContext(boolean epoll) {
    start(epoll);
    int port = servers.replying(OK);
    Context ctx = vertx.getOrCreateContext();
    Promise<Boolean> onContext = Promise.promise();
    ctx.runOnContext(
        v ->
            prober
                .probe(new ProbeTarget("127.0.0.1", port), CheckSpec.builder().build())
                .onComplete(
                    ar ->
                        onContext.complete(ar.result().passed() && Vertx.currentContext() == ctx)));
    assertThat(LoopbackServers.await(onContext.future())).isTrue();
  }

  @Test
  void aHostNameGoesToTheFallback() {
    start(false);
    List<String> fallbackCalls = new CopyOnWriteArrayList<>();
    ProbeConnection.Connector fallback =
        (target, spec, timeoutMs, done) -> {
          fallbackCalls.add(target.ip());
          done.fail(new IOException("not here"));
        };
    ProbeConnection.Connector connector = ChannelConnection.Connector.create(vertx, fallback);
    Promise<Throwable> failed = Promise.promise();
    vertx
        .getOrCreateContext()
        .runOnContext(
            v ->
                connector.connect(
                    new ProbeTarget("localhost", 80),
                    CheckSpec.builder().build(),
                    1000,
                    (conn, failure) -> failed.complete(failure)));
    assertThat(LoopbackServers.await(failed.future())).hasMessage("not here");
    assertThat(fallbackCalls).containsExactly("localhost");
  }

  /**
   * Netty's leak detector at PARANOID tracks every buffer; after probes that stop reading mid-way
   * (a verdict before the end of a large answer, a head too large, a reused connection that gets
   * bytes while idle) and a few GCs, no buffer may be reported unreleased.
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource("transports")
  void readBuffersAreReleased(boolean epoll) throws Exception {
    ResourceLeakDetector<ByteBuf> detector = byteBufLeakDetector();
    List<String> leaks = new CopyOnWriteArrayList<>();
    ResourceLeakDetector.Level before = ResourceLeakDetector.getLevel();
    ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.PARANOID);
    detector.setLeakListener((type, records) -> leaks.add(records));
    try {
      // the detector works here: a buffer dropped on purpose is reported (a unique hint, as the
      // detector reports a given record only once per JVM)
      ByteBufAllocator.DEFAULT.directBuffer(16).touch("deliberate leak " + System.nanoTime());
      sweepUntil(() -> !leaks.isEmpty());
      assertThat(leaks).as("a deliberate leak is detected").isNotEmpty();
      leaks.clear();

      start(epoll);
      Context ctx = vertx.getOrCreateContext();
      Buffer large = Buffer.buffer("HTTP/1.1 200 OK\r\nContent-Length: 1048576\r\n\r\n");
      large.appendBytes(new byte[1024 * 1024]);
      int bigBody = servers.raw(c -> c.handler(b -> c.write(large)));
      StringBuilder head = new StringBuilder("HTTP/1.1 200 OK\r\n");
      for (int i = 0; i < 100; i++) {
        head.append("X-Pad-").append(i).append(": ").append("p".repeat(1000)).append("\r\n");
      }
      int hugeHead = servers.raw(c -> c.handler(b -> c.write(head + "\r\n")));
      int chatty =
          servers.raw(
              c ->
                  c.handler(
                      b -> {
                        c.write(OK);
                        vertx.setTimer(20, id -> c.write("unasked bytes"));
                      }));
      CheckSpec spec = CheckSpec.builder().timeout(Duration.ofSeconds(3)).build();
      for (int round = 0; round < 5; round++) {
        assertThat(probe(ctx, new ProbeTarget("127.0.0.1", bigBody), spec).passed()).isTrue();
        assertThat(probe(ctx, new ProbeTarget("127.0.0.1", hugeHead), spec).reason())
            .isEqualTo(Reason.MALFORMED_RESPONSE);
        assertThat(probe(ctx, new ProbeTarget("127.0.0.1", chatty), reuse()).passed()).isTrue();
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
        while (prober.idleConnections() > 0 && System.nanoTime() < until) {
          Thread.sleep(5);
        }
        assertThat(prober.idleConnections()).as("unasked bytes drop the idle connection").isZero();
      }
      sweepUntil(() -> !leaks.isEmpty());
      assertThat(leaks).as("buffers not released").isEmpty();
    } finally {
      detector.setLeakListener(null);
      ResourceLeakDetector.setLevel(before);
    }
  }

  @SuppressWarnings("unchecked")
  static ResourceLeakDetector<ByteBuf> byteBufLeakDetector() throws Exception {
    Field field = AbstractByteBuf.class.getDeclaredField("leakDetector");
    field.setAccessible(true);
    return (ResourceLeakDetector<ByteBuf>) field.get(null);
  }

  /** GCs and allocates (a tracked allocation reports what the GC found) until done, at most 2 s. */
  static void sweepUntil(BooleanSupplier done) throws InterruptedException {
    for (int i = 0; i < 20 && !done.getAsBoolean(); i++) {
      System.gc();
      Thread.sleep(100);
      ByteBufAllocator.DEFAULT.directBuffer(1).release();
    }
  }
}
