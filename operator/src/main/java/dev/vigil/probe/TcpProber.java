package dev.vigil.probe;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.ConnectOptions;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetClientOptions;
import io.vertx.core.net.NetSocket;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * TCP checks over a Vert.x {@link NetClient}: connect within the deadline, then optionally write
 * {@code send} and require a reply that starts with {@code expect}. Reads at most as many bytes as
 * {@code expect} has. Always a fresh connection, closed right after the verdict.
 */
public final class TcpProber implements Prober {

  private final Vertx vertx;
  private final NetClient client;

  public TcpProber(Vertx vertx) {
    this.vertx = vertx;
    this.client = vertx.createNetClient(new NetClientOptions().setTcpNoDelay(true));
  }

  @Override
  public Future<ProbeResult> probe(ProbeTarget target, CheckSpec spec) {
    long start = System.nanoTime();
    try {
      Promise<ProbeResult> promise = Promise.promise();
      new Attempt(spec, start, promise).start(target.ip(), spec.portFor(target));
      return promise.future();
    } catch (RuntimeException e) {
      return Future.succeededFuture(
          ProbeResult.fail(Reason.INTERNAL, "prober error: " + e, HttpProber.elapsedMs(start)));
    }
  }

  @Override
  public Future<Void> close() {
    return client.close();
  }

  private final class Attempt {
    final CheckSpec spec;
    final long start;
    final Promise<ProbeResult> promise;
    final byte[] expect;
    final byte[] got;
    int gotLength;
    long timer = -1;
    NetSocket socket;
    boolean done;

    Attempt(CheckSpec spec, long start, Promise<ProbeResult> promise) {
      this.spec = spec;
      this.start = start;
      this.promise = promise;
      this.expect = spec.tcp().expectBytes();
      this.got = new byte[expect.length];
    }

    void start(String ip, int port) {
      long timeout = spec.timeout().toMillis();
      timer = vertx.setTimer(timeout, id -> finish(ProbeResult.timeout(timeout)));
      client
          .connect(new ConnectOptions().setHost(ip).setPort(port).setTimeout((int) timeout))
          .onComplete(
              ar -> {
                if (done) {
                  if (ar.succeeded()) {
                    ar.result().close();
                  }
                } else if (ar.failed()) {
                  finish(TransportFailure.classify(ar.cause(), elapsed()));
                } else {
                  connected(ar.result());
                }
              });
    }

    void connected(NetSocket s) {
      socket = s;
      if (spec.tcp().send() != null) {
        s.write(Buffer.buffer(spec.tcp().send().getBytes(StandardCharsets.UTF_8)));
      }
      if (expect.length == 0) {
        finish(ProbeResult.pass("connected", elapsed()));
        return;
      }
      s.handler(this::onData);
      s.exceptionHandler(t -> finish(TransportFailure.classify(t, elapsed())));
      s.closeHandler(
          v ->
              finish(
                  gotLength == 0
                      ? TransportFailure.closed(elapsed())
                      : ProbeResult.fail(
                          Reason.EXPECT_MISMATCH, "reply shorter than expected", elapsed())));
    }

    void onData(Buffer data) {
      int n = Math.min(data.length(), expect.length - gotLength);
      data.getBytes(0, n, got, gotLength);
      gotLength += n;
      if (!Arrays.equals(got, 0, gotLength, expect, 0, gotLength)) {
        finish(ProbeResult.fail(Reason.EXPECT_MISMATCH, "reply does not match expect", elapsed()));
      } else if (gotLength == expect.length) {
        finish(ProbeResult.pass("reply matches", elapsed()));
      }
    }

    long elapsed() {
      return HttpProber.elapsedMs(start);
    }

    void finish(ProbeResult result) {
      if (done) {
        return;
      }
      done = true;
      if (timer >= 0) {
        vertx.cancelTimer(timer);
      }
      if (socket != null) {
        socket.handler(null).exceptionHandler(null).closeHandler(null);
        socket.close();
      }
      promise.complete(result);
    }
  }
}
