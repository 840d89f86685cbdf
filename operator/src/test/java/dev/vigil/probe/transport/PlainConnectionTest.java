package dev.vigil.probe.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.vigil.probe.CheckSpec;
import dev.vigil.probe.LoopbackServers;
import dev.vigil.probe.ProbeProtocol;
import dev.vigil.probe.ProbeResult;
import dev.vigil.probe.ProbeTarget;
import dev.vigil.probe.Reason;
import dev.vigil.probe.http.HttpProber;
import dev.vigil.probe.tcp.TcpProber;
import io.netty.buffer.AbstractByteBuf;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
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
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Plain probes over a bare socket on both transports a Vert.x on Linux runs ({@link
 * ProbeConnection#plain}: {@link EpollConnection} on epoll, {@link ChannelConnection} on NIO): the
 * socket family follows the target's IP literal, callbacks run on the caller's context and loop,
 * read buffers are released, writes larger than the socket's buffer go out whole, every socket is
 * closed however its probe ends, and whatever is not an IP literal goes to the fallback.
 */
class PlainConnectionTest {

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

  /** The local port of a connection of either kind. */
  static int localPort(ProbeConnection conn) {
    if (conn instanceof EpollConnection e) {
      return e.socket().localAddress().getPort();
    }
    return ((InetSocketAddress) ((ChannelConnection) conn).channel().localAddress()).getPort();
  }

  static ProbeConnection.Connector plain(Vertx vertx) {
    return ProbeConnection.plain(
        vertx, (target, spec, timeoutMs, done) -> done.fail(new AssertionError("fallback used")));
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
            .protocol(ProbeProtocol.TCP)
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
    ProbeConnection.Connector connector = plain(vertx);
    CheckSpec http = CheckSpec.builder().build();
    CheckSpec tcpSend =
        CheckSpec.builder()
            .protocol(ProbeProtocol.TCP)
            .tcp(new CheckSpec.Tcp("PING\r\n", null))
            .build();
    CheckSpec tcpConnect = CheckSpec.builder().protocol(ProbeProtocol.TCP).build();
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
                          int client = localPort(conn);
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
    assertThat(EpollConnector.sendsFirst(http)).isTrue();
    assertThat(
            EpollConnector.sendsFirst(
                CheckSpec.builder().protocol(ProbeProtocol.WEBSOCKET).build()))
        .isTrue();
    assertThat(EpollConnector.sendsFirst(tcpSend)).isTrue();
    assertThat(EpollConnector.sendsFirst(tcpConnect)).isFalse();
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
    ProbeConnection.Connector connector = plain(vertx);
    assertThat(connector)
        .isInstanceOf(epoll ? EpollConnector.class : ChannelConnection.Connector.class);
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
                    EventLoop own = ((ContextInternal) ctx).nettyEventLoop();
                    if (conn instanceof EpollConnection e) {
                      events.add("class " + conn.getClass().getSimpleName());
                      events.add("loop " + (e.loop() == own));
                      events.add("nodelay " + tcpNoDelay(e));
                    } else {
                      Channel c = ((ChannelConnection) conn).channel();
                      events.add("class " + c.getClass().getSimpleName());
                      events.add("loop " + (c.eventLoop() == own));
                      events.add("nodelay " + c.config().getOption(ChannelOption.TCP_NODELAY));
                    }
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
          epoll ? EpollConnection.class.getSimpleName() : NioSocketChannel.class.getSimpleName();
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

  /** Connects {@code connector} to {@code target} from a context of {@code vertx}; waits. */
  static ProbeConnection connect(
      Vertx vertx, ProbeConnection.Connector connector, ProbeTarget target, int timeoutMs)
      throws Exception {
    CompletableFuture<ProbeConnection> connected = new CompletableFuture<>();
    vertx
        .getOrCreateContext()
        .runOnContext(
            v ->
                connector.connect(
                    target,
                    CheckSpec.builder().build(),
                    timeoutMs,
                    (conn, failure) -> {
                      if (failure != null) {
                        connected.completeExceptionally(failure);
                      } else {
                        connected.complete(conn);
                      }
                    }));
    return connected.get(5, TimeUnit.SECONDS);
  }

  /**
   * 32 MiB written at once to a server that does not read for 300 ms: more than the kernel's
   * buffers take, so the connection keeps the rest and sends it as room comes back; the server
   * counts every byte, in order, then answers.
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource("transports")
  void aWriteLargerThanTheSocketBuffersGoesOutWholeAndInOrder(boolean epoll) throws Exception {
    start(epoll);
    int size = 32 * 1024 * 1024;
    byte[] bytes = new byte[size];
    for (int i = 0; i < size; i++) {
      bytes[i] = (byte) (i % 251);
    }
    int port =
        servers.raw(
            c -> {
              c.pause();
              vertx.setTimer(300, id -> c.resume());
              long[] seen = {0};
              boolean[] inOrder = {true};
              c.handler(
                  b -> {
                    for (int i = 0; i < b.length(); i++) {
                      inOrder[0] &= b.getByte(i) == (byte) ((seen[0] + i) % 251);
                    }
                    seen[0] += b.length();
                    if (seen[0] == size) {
                      c.write(inOrder[0] ? "all in order\n" : "out of order\n");
                    }
                  });
            });
    ProbeConnection conn = connect(vertx, plain(vertx), new ProbeTarget("127.0.0.1", port), 2000);
    CompletableFuture<String> answer = new CompletableFuture<>();
    vertx
        .getOrCreateContext()
        .runOnContext(
            v -> {
              conn.receive(
                  new ProbeConnection.Receiver() {
                    @Override
                    public void onData(byte[] data, int offset, int length) {
                      answer.complete(new String(data, offset, length, StandardCharsets.US_ASCII));
                    }

                    @Override
                    public void onError(Throwable failure) {
                      answer.completeExceptionally(failure);
                    }

                    @Override
                    public void onClose() {
                      answer.complete("closed");
                    }
                  });
              conn.write(bytes);
            });
    try {
      assertThat(answer.get(20, TimeUnit.SECONDS)).isEqualTo("all in order\n");
    } finally {
      conn.close();
    }
  }

  /**
   * A connect the backend never answers (its accept queue is full, so the kernel drops the SYN)
   * fails with a timeout, which {@link TransportFailure} reads as one, and frees its socket.
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource("transports")
  void aConnectNeverAnsweredTimesOutAndFreesItsSocket(boolean epoll) throws Exception {
    assumeTrue(Files.isDirectory(Path.of("/proc/self/fd")), "Linux /proc/self/fd");
    start(epoll);
    try (ServerSocket full = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
      List<Socket> queued = fillAcceptQueue(full);
      try {
        ProbeConnection.Connector connector = plain(vertx);
        ProbeTarget target = new ProbeTarget("127.0.0.1", full.getLocalPort());
        // warm up (classes, per-thread buffers): a first timeout
        assertThat(
                catchThrowableOfType(
                    () -> connect(vertx, connector, target, 50), ExecutionException.class))
            .isNotNull();
        int before = openFds();
        for (int i = 0; i < 3; i++) {
          long started = System.nanoTime();
          Throwable failure =
              catchThrowableOfType(
                  () -> connect(vertx, connector, target, 200), ExecutionException.class);
          long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
          assertThat(failure).isNotNull();
          assertThat(TransportFailure.classify(failure.getCause(), tookMs).reason())
              .as("%s", failure.getCause())
              .isEqualTo(Reason.TIMEOUT);
          assertThat(tookMs).isBetween(150L, 3000L);
        }
        assertThat(awaitFds(before)).as("open file descriptors after").isLessThanOrEqualTo(before);
      } finally {
        for (Socket s : queued) {
          s.close();
        }
      }
    }
  }

  /** Connects blocking sockets to {@code server} (never accepted) until one is not answered. */
  static List<Socket> fillAcceptQueue(ServerSocket server) throws IOException {
    List<Socket> queued = new ArrayList<>();
    for (int i = 0; i < 64; i++) {
      Socket s = new Socket();
      try {
        s.connect(server.getLocalSocketAddress(), 200);
        queued.add(s);
      } catch (SocketTimeoutException e) {
        s.close();
        return queued;
      }
    }
    throw new AssertionError("the accept queue never filled");
  }

  /**
   * However a probe ends (a pass, a refusal, a reset, a hang past its deadline, garbage, a peer
   * that closes first, a reused connection dropped for unasked bytes), its socket is closed: after
   * 20 rounds the process has no more file descriptors open than before.
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource("transports")
  void everySocketIsClosedHoweverItsProbeEnds(boolean epoll) throws Exception {
    assumeTrue(Files.isDirectory(Path.of("/proc/self/fd")), "Linux /proc/self/fd");
    start(epoll);
    Context ctx = vertx.getOrCreateContext();
    CheckSpec quick = CheckSpec.builder().timeout(Duration.ofMillis(200)).build();
    Map<Integer, Reason> expected = new LinkedHashMap<>();
    expected.put(servers.replying(OK), null);
    expected.put(servers.refusing(), Reason.CONNECTION_REFUSED);
    expected.put(
        servers.raw(
            new NetServerOptions().setSoLinger(0),
            c ->
                c.handler(
                    b -> {
                      c.write("HTTP/1.1 200 OK\r\nContent-Le");
                      vertx.setTimer(20, id -> c.close());
                    })),
        Reason.CONNECTION_RESET);
    expected.put(servers.raw(c -> {}), Reason.TIMEOUT);
    expected.put(servers.raw(c -> c.handler(b -> c.write("garbage\r\n"))), null);
    expected.put(servers.raw(c -> c.handler(b -> c.close())), Reason.CONNECTION_CLOSED);
    int chatty = chatty();
    Runnable round =
        () -> {
          expected.forEach(
              (port, reason) -> {
                ProbeResult r = probe(ctx, new ProbeTarget("127.0.0.1", port), quick);
                if (reason != null) {
                  assertThat(r.reason()).as("port %d: %s", port, r).isEqualTo(reason);
                }
              });
          assertThat(probe(ctx, new ProbeTarget("127.0.0.1", chatty), reuse()).passed()).isTrue();
        };
    round.run(); // warm up: classes, per-thread buffers, the servers' own sockets
    int before = awaitFds(0);
    for (int i = 0; i < 20; i++) {
      round.run();
    }
    assertThat(awaitFds(before))
        .as("open file descriptors after 20 rounds")
        .isLessThanOrEqualTo(before);
  }

  /** A backend that answers 200, then 20 ms later sends bytes nobody asked for. */
  int chatty() {
    return servers.raw(
        c ->
            c.handler(
                b -> {
                  c.write(OK);
                  vertx.setTimer(20, id -> c.write("unasked bytes"));
                }));
  }

  static int openFds() throws IOException {
    try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
      return (int) fds.count();
    }
  }

  /** Open file descriptors once they are at most {@code atMost} (or after 3 s: then as many). */
  static int awaitFds(int atMost) throws Exception {
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
    int open = openFds();
    while (open > atMost && System.nanoTime() < until) {
      Thread.sleep(20);
      open = openFds();
    }
    return open;
  }

  static boolean tcpNoDelay(EpollConnection connection) {
    try {
      return connection.socket().isTcpNoDelay();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("transports")
  void aHostNameGoesToTheFallback(boolean epoll) {
    start(epoll);
    List<String> fallbackCalls = new CopyOnWriteArrayList<>();
    ProbeConnection.Connector fallback =
        (target, spec, timeoutMs, done) -> {
          fallbackCalls.add(target.ip());
          done.fail(new IOException("not here"));
        };
    ProbeConnection.Connector connector = ProbeConnection.plain(vertx, fallback);
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
      int chatty = chatty();
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
