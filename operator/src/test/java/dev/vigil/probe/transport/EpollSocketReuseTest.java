package dev.vigil.probe.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.vigil.probe.CheckSpec;
import dev.vigil.probe.LoopbackServers;
import dev.vigil.probe.ProbeProtocol;
import dev.vigil.probe.ProbeResult;
import dev.vigil.probe.ProbeTarget;
import dev.vigil.probe.http.HttpProber;
import io.netty.channel.ConnectTimeoutException;
import io.netty.channel.epoll.EpollIoEvent;
import io.netty.channel.epoll.EpollIoOps;
import io.netty.channel.epoll.LinuxSocket;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntConsumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * On epoll a socket whose peer closed first carries the next probe's connection ({@link
 * EpollConnection}): a new handshake on the same socket, with the options a new socket would have,
 * and no error left over from the reset that ended the last one. Every other end closes the socket
 * with a FIN, and the idle sockets close with their event loop.
 */
class EpollSocketReuseTest {

  static final CheckSpec SENDS =
      CheckSpec.builder().protocol(ProbeProtocol.TCP).tcp(new CheckSpec.Tcp("PING", null)).build();
  static final CheckSpec CONNECT_ONLY = CheckSpec.builder().protocol(ProbeProtocol.TCP).build();

  Vertx vertx;
  LoopbackServers servers;
  ProbeConnection.Connector connector;
  Context ctx;

  @BeforeEach
  void start() {
    vertx = Vertx.vertx(new VertxOptions().setPreferNativeTransport(true));
    assumeTrue(vertx.isNativeTransportEnabled(), "epoll transport");
    servers = new LoopbackServers(vertx);
    connector = PlainConnectionTest.plain(vertx);
    ctx = vertx.getOrCreateContext();
  }

  @AfterEach
  void stop() {
    if (vertx != null) {
      servers.close();
      LoopbackServers.await(vertx.close());
    }
  }

  /** What one connection saw: its socket, its local port and the bytes it read. */
  record Exchange(EpollConnection connection, LinuxSocket socket, int localPort, String reply) {}

  /**
   * Connects with {@code spec}, then writes {@code send} and reads until the peer has sent {@code
   * until} or closed, then closes; without {@code send} it closes at once. {@code look} gets the
   * local port right after the connect.
   */
  Exchange exchange(int port, CheckSpec spec, String send, String until, IntConsumer look)
      throws Exception {
    return exchange(port, spec, send, until, look, false);
  }

  /**
   * As above; with {@code finish} the exchange ends with {@link ProbeConnection#finish()} once
   * {@code until} was read, and the receiver must have been told the close by its return.
   */
  Exchange exchange(
      int port, CheckSpec spec, String send, String until, IntConsumer look, boolean finish)
      throws Exception {
    CompletableFuture<Exchange> done = new CompletableFuture<>();
    ctx.runOnContext(
        v ->
            connector.connect(
                new ProbeTarget("127.0.0.1", port),
                spec,
                2000,
                (conn, failure) -> {
                  if (failure != null) {
                    done.completeExceptionally(failure);
                    return;
                  }
                  EpollConnection c = (EpollConnection) conn;
                  int local = PlainConnectionTest.localPort(c);
                  if (look != null) {
                    look.accept(local);
                  }
                  StringBuilder read = new StringBuilder();
                  boolean[] told = new boolean[1];
                  Runnable end =
                      () -> {
                        if (finish) {
                          conn.finish();
                          if (!told[0]) {
                            done.completeExceptionally(new AssertionError("onClose not told"));
                          }
                        } else {
                          conn.close();
                        }
                        done.complete(new Exchange(c, c.socket(), local, read.toString()));
                      };
                  conn.receive(
                      new ProbeConnection.Receiver() {
                        @Override
                        public void onData(byte[] bytes, int offset, int length) {
                          read.append(new String(bytes, offset, length, StandardCharsets.US_ASCII));
                          if (until != null && read.toString().contains(until)) {
                            end.run();
                          }
                        }

                        @Override
                        public void onError(Throwable t) {
                          done.completeExceptionally(t);
                        }

                        @Override
                        public void onClose() {
                          told[0] = true;
                          if (!done.isDone()) {
                            end.run();
                          }
                        }
                      });
                  if (send != null) {
                    conn.write(send.getBytes(StandardCharsets.US_ASCII));
                  } else {
                    end.run();
                  }
                }));
    return done.get(5, TimeUnit.SECONDS);
  }

  /** A server that answers the first bytes with PONG and closes; counts its connections. */
  int pongThenClose(AtomicInteger accepted) {
    return servers.raw(
        socket -> {
          accepted.incrementAndGet();
          socket.handler(
              b -> {
                socket.handler(null);
                socket.write("PONG").onComplete(ar -> socket.close());
              });
        });
  }

  @Test
  void aSocketWhosePeerClosedFirstCarriesTheNextConnection() throws Exception {
    AtomicInteger accepted = new AtomicInteger();
    int port = pongThenClose(accepted);

    Exchange first = exchange(port, SENDS, "PING", null, null);
    Exchange second = exchange(port, SENDS, "PING", null, null);
    Exchange third = exchange(port, SENDS, "PING", null, null);

    assertThat(List.of(first.reply(), second.reply(), third.reply()))
        .as("each connection's answer (an error left by the reset would fail the next connect)")
        .containsOnly("PONG");
    assertThat(second.socket()).as("the same socket").isSameAs(first.socket());
    assertThat(third.socket()).isSameAs(first.socket());
    assertThat(second.connection()).as("a new connection").isNotSameAs(first.connection());
    assertThat(accepted).as("handshakes the server accepted").hasValue(3);
    assertThat(second.socket().isTcpNoDelay()).as("TCP_NODELAY kept").isTrue();
  }

  /**
   * The reset that ends a connection also ends the held-back ACK of the last one: a connect-only
   * check on a reused socket acknowledges the handshake at once (the server's side {@code
   * ESTABLISHED}, 01 in /proc/net/tcp), as on a new socket; a probe that writes first holds it back
   * again (03).
   */
  @Test
  void aReusedSocketAcknowledgesAsANewOneWould() throws Exception {
    assumeTrue(Files.exists(Path.of("/proc/net/tcp")), "Linux /proc/net tables");
    int port = pongThenClose(new AtomicInteger());
    List<String> states = new CopyOnWriteArrayList<>();

    Exchange pooled = exchange(port, SENDS, "PING", null, null);
    Exchange connectOnly = exchange(port, CONNECT_ONLY, null, null, look(port, states, "connect"));
    Exchange fresh = exchange(port, SENDS, "PING", null, null); // the connect-only one closed
    Exchange writer = exchange(port, SENDS, "PING", null, look(port, states, "writes first"));

    assertThat(connectOnly.socket()).as("connect-only, pooled socket").isSameAs(pooled.socket());
    assertThat(fresh.socket()).as("after a FIN, a new socket").isNotSameAs(pooled.socket());
    assertThat(writer.socket()).as("writes first, pooled socket").isSameAs(fresh.socket());
    assertThat(writer.reply()).isEqualTo("PONG");
    assertThat(states).containsExactly("connect [01]", "writes first [03]");
  }

  /** Adds the server side's TCP state of the connection from a local port, labelled. */
  static IntConsumer look(int port, List<String> states, String label) {
    return local -> {
      try {
        states.add(label + " " + PlainConnectionTest.socketStates(port, local));
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    };
  }

  /**
   * A reused socket's readiness from before its connect (the hang-up and error of its reset, read
   * by the kernel before the connect and handed on in the same batch) does not pass for the
   * connect's outcome: a connect nobody answers still times out.
   */
  @Test
  void aStaleHangUpDoesNotCompleteTheNextConnect() throws Exception {
    int port = pongThenClose(new AtomicInteger());
    Exchange pooled = exchange(port, SENDS, "PING", null, null);
    try (ServerSocket full = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
      List<Socket> queued = PlainConnectionTest.fillAcceptQueue(full);
      try {
        CompletableFuture<Throwable> outcome = new CompletableFuture<>();
        ctx.runOnContext(
            v ->
                connector.connect(
                    new ProbeTarget("127.0.0.1", full.getLocalPort()),
                    SENDS,
                    300,
                    (conn, failure) -> {
                      outcome.complete(failure == null ? null : failure);
                      if (conn != null) {
                        conn.close();
                      }
                    }));
        // the connect is under way (SYN sent, never answered): the reset's event arrives now
        EpollSlot slot = pooled.connection().slot();
        CompletableFuture<Boolean> injected = new CompletableFuture<>();
        ctx.runOnContext(
            v -> {
              boolean reused = slot.current != null;
              if (reused) {
                slot.handle(slot.registration, (EpollIoEvent) () -> EpollIoOps.valueOf(STALE));
              }
              injected.complete(reused);
            });
        assertThat(injected.get(5, TimeUnit.SECONDS))
            .as("the connect took the pooled socket")
            .isTrue();
        Throwable failure = outcome.get(5, TimeUnit.SECONDS);
        assertThat(failure).as("the connect's outcome").isInstanceOf(ConnectTimeoutException.class);
      } finally {
        for (Socket s : queued) {
          s.close();
        }
      }
    }
  }

  /** {@code EPOLLOUT | EPOLLERR | EPOLLHUP}: what a socket reports right after its reset. */
  static final int STALE = 0x4 | 0x8 | 0x10;

  /**
   * A server that answers each PING with PONG and keeps the connection open; what it sees of the
   * client's close goes to {@code serverSaw} ("end", "error: ..."), and the time of its close to
   * {@code closedAt}.
   */
  int pongStayingOpen(List<String> serverSaw, CompletableFuture<Long> closedAt) {
    return servers.raw(
        socket -> {
          socket.handler(b -> socket.write("PONG"));
          socket.exceptionHandler(t -> serverSaw.add("error: " + t.getMessage()));
          socket.endHandler(v -> serverSaw.add("end"));
          socket.closeHandler(v -> closedAt.complete(System.nanoTime()));
        });
  }

  /** A server that answers the first bytes with PONG and closes 30 ms later. */
  int pongThenLateClose() {
    return servers.raw(
        socket ->
            socket.handler(
                b -> {
                  socket.handler(null);
                  socket.write("PONG");
                  vertx.setTimer(30, id -> socket.close());
                }));
  }

  /**
   * A finished connection whose peer closes a little later (after the verdict, as a server that was
   * asked to close does) waits for that close, and its socket carries the next connection.
   */
  @Test
  void aFinishedConnectionWaitsForItsPeersCloseAndItsSocketIsReused() throws Exception {
    int port = pongThenLateClose();

    Exchange first = exchange(port, SENDS, "PING", "PONG", null, true);
    Thread.sleep(100); // the server's close comes 30 ms after its answer
    Exchange second = exchange(port, SENDS, "PING", "PONG", null, true);

    assertThat(first.reply()).isEqualTo("PONG");
    assertThat(second.socket()).as("the same socket").isSameAs(first.socket());
  }

  /**
   * A finished connection whose peer keeps its side open ends with a FIN once the wait is over: the
   * server sees a clean end (no reset), about {@link EpollConnection#DRAIN_MS} later.
   */
  @Test
  void aFinishedConnectionWhosePeerStaysOpenGetsAFinAfterTheWait() throws Exception {
    List<String> serverSaw = new CopyOnWriteArrayList<>();
    CompletableFuture<Long> ended = new CompletableFuture<>();
    int port = pongStayingOpen(serverSaw, ended);

    long finished = System.nanoTime();
    Exchange first = exchange(port, SENDS, "PING", "PONG", null, true);
    long waitedMs = TimeUnit.NANOSECONDS.toMillis(ended.get(5, TimeUnit.SECONDS) - finished);
    Exchange second = exchange(port, SENDS, "PING", "PONG", null, true);

    assertThat(first.reply()).isEqualTo("PONG");
    assertThat(waitedMs)
        .as("ms until the FIN")
        .isGreaterThanOrEqualTo(EpollConnection.DRAIN_MS - 100);
    assertThat(serverSaw).contains("end").noneMatch(e -> e.startsWith("error"));
    assertThat(second.socket()).as("a new socket").isNotSameAs(first.socket());
  }

  /**
   * An HTTP probe ends with {@link ProbeConnection#finish()}: against a server that closes 30 ms
   * after its answer, the socket goes back to the loop's pool.
   */
  @Test
  void anHttpProbeLeavesItsSocketToThePoolWhenTheServerClosesAfterAnswering() throws Exception {
    int port =
        servers.raw(
            socket ->
                socket.handler(
                    b -> {
                      socket.handler(null);
                      socket.write(PlainConnectionTest.OK);
                      vertx.setTimer(30, id -> socket.close());
                    }));
    HttpProber prober = new HttpProber(vertx);
    try {
      CompletableFuture<ProbeResult> result = new CompletableFuture<>();
      ctx.runOnContext(
          v ->
              prober
                  .probe(new ProbeTarget("127.0.0.1", port), CheckSpec.builder().build())
                  .onComplete((r, t) -> result.complete(r)));
      assertThat(result.get(5, TimeUnit.SECONDS).passed()).isTrue();
      int idle = 0;
      for (int i = 0; i < 100 && idle == 0; i++) {
        Thread.sleep(10);
        CompletableFuture<Integer> count = new CompletableFuture<>();
        ctx.runOnContext(v -> count.complete(SocketPool.idle()));
        idle = count.get(5, TimeUnit.SECONDS);
      }
      assertThat(idle).as("idle sockets on the probe's loop").isEqualTo(1);
    } finally {
      LoopbackServers.await(prober.close());
    }
  }

  /**
   * A peer that keeps its side open after answering gets a FIN, not a reset: its connection ends
   * without an error, and the socket is not reused.
   */
  @Test
  void aPeerThatKeepsItsSideOpenGetsAFinNotAReset() throws Exception {
    List<String> serverSaw = new CopyOnWriteArrayList<>();
    CompletableFuture<Long> ended = new CompletableFuture<>();
    int port = pongStayingOpen(serverSaw, ended);

    Exchange first = exchange(port, SENDS, "PING", "PONG", null);
    ended.get(5, TimeUnit.SECONDS);
    Exchange second = exchange(port, SENDS, "PING", "PONG", null);

    assertThat(first.reply()).isEqualTo("PONG");
    assertThat(serverSaw)
        .as("what the server saw of the close")
        .contains("end")
        .noneMatch(s -> s.startsWith("error"));
    assertThat(second.socket()).as("a new socket").isNotSameAs(first.socket());
  }

  /** Idle sockets are closed with their event loop: no file descriptor outlives the Vert.x. */
  @Test
  void idleSocketsCloseWithTheirEventLoop() throws Exception {
    assumeTrue(Files.isDirectory(Path.of("/proc/self/fd")), "Linux /proc/self/fd");
    stop(); // measure around a Vert.x of our own, once its classes and jars are loaded
    cycle();
    int before = PlainConnectionTest.awaitFds(0);
    cycle();
    assertThat(PlainConnectionTest.awaitFds(before))
        .as("open file descriptors after a Vert.x that pooled sockets closed")
        .isLessThanOrEqualTo(before);
    vertx = null;
  }

  /** A Vert.x whose loop pools a few sockets, then closes. */
  void cycle() throws Exception {
    start();
    AtomicInteger accepted = new AtomicInteger();
    int port = pongThenClose(accepted);
    List<CompletableFuture<Exchange>> all = new CopyOnWriteArrayList<>();
    for (int i = 0; i < 4; i++) {
      all.add(CompletableFuture.completedFuture(exchange(port, SENDS, "PING", null, null)));
    }
    assertThat(all).allMatch(f -> f.join().reply().equals("PONG"));
    stop();
  }
}
