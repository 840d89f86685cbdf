package dev.vigil.probe.agent;

import dev.vigil.probe.AgentProbe;
import dev.vigil.probe.AgentReply;
import dev.vigil.probe.ProbeTarget;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetClientOptions;
import io.vertx.core.net.NetSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * HAProxy's agent check ({@link AgentProbe}) on a Vert.x {@link NetClient}: connect to the agent
 * port, read one line (up to {@link AgentReply#MAX_LINE} bytes, ended by a newline or by the agent
 * closing), close. Connect and read share one deadline, the check's timeout. A refused or reset
 * connection, a timeout (a silent or slow agent), an empty reply or a line without a known word all
 * answer {@link AgentReply#nothing}: the last answer stands (docs/decision.md). Runs on the
 * caller's context; nothing is sent to the agent (HAProxy's {@code agent-send} is not supported).
 */
public final class AgentProber implements AgentProbe {
  private final Vertx vertx;
  private final NetClient client;

  public AgentProber(Vertx vertx) {
    this.vertx = vertx;
    this.client = vertx.createNetClient(new NetClientOptions().setTcpNoDelay(true));
  }

  @Override
  public Future<AgentReply> ask(ProbeTarget target, Duration timeout) {
    Promise<AgentReply> done = Promise.promise();
    long deadline =
        vertx.setTimer(
            Math.max(1, timeout.toMillis()),
            id ->
                done.tryComplete(
                    AgentReply.nothing("timeout after " + timeout.toMillis() + " ms")));
    client
        .connect(target.port(), target.ip())
        .onComplete(
            ar -> {
              if (ar.failed()) {
                done.tryComplete(AgentReply.nothing(describe(ar.cause())));
                return;
              }
              NetSocket socket = ar.result();
              if (done.future().isComplete()) {
                socket.close();
                return;
              }
              read(socket, done);
              done.future().onComplete(x -> socket.close());
            });
    return done.future().onComplete(x -> vertx.cancelTimer(deadline));
  }

  /**
   * Collects bytes until a newline, {@link AgentReply#MAX_LINE} bytes, or the end of the stream.
   */
  private static void read(NetSocket socket, Promise<AgentReply> done) {
    Buffer line = Buffer.buffer(64);
    socket.handler(
        chunk -> {
          for (int i = 0; i < chunk.length() && !done.future().isComplete(); i++) {
            byte b = chunk.getByte(i);
            if (b == '\n' || line.length() >= AgentReply.MAX_LINE) {
              done.tryComplete(parse(line));
              return;
            }
            line.appendByte(b);
          }
        });
    socket.endHandler(v -> done.tryComplete(parse(line)));
    socket.exceptionHandler(e -> done.tryComplete(AgentReply.nothing(describe(e))));
  }

  private static AgentReply parse(Buffer line) {
    String text = line.toString(StandardCharsets.US_ASCII);
    if (text.endsWith("\r")) {
      text = text.substring(0, text.length() - 1);
    }
    return AgentReply.parse(text);
  }

  private static String describe(Throwable e) {
    String m = e.getMessage();
    if (m != null && m.toLowerCase(java.util.Locale.ROOT).contains("refused")) {
      return "connection refused";
    }
    return e.getClass().getSimpleName() + (m == null ? "" : ": " + m);
  }

  public Future<Void> close() {
    return client.close();
  }
}
