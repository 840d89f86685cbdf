package dev.vigil.probe.tcp;

import dev.vigil.probe.CheckSpec;
import dev.vigil.probe.ProbeResult;
import dev.vigil.probe.ProbeTarget;
import dev.vigil.probe.Prober;
import dev.vigil.probe.Reason;
import dev.vigil.probe.http.HttpProber;
import dev.vigil.probe.transport.ProbeConnection;
import dev.vigil.probe.transport.ProbeDeadline;
import dev.vigil.probe.transport.SourceAddress;
import dev.vigil.probe.transport.TransportFailure;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * TCP checks: connect within the deadline, then optionally write {@code send} and require a reply
 * that starts with {@code expect}. Reads at most as many bytes as {@code expect} has. Always a
 * fresh connection, closed right after the verdict. Connections are bare sockets on the caller's
 * event loop ({@link ProbeConnection#plain}; {@link HttpProber} says why), over the same {@link
 * ProbeConnection} seam as HTTP.
 */
public final class TcpProber implements Prober {

  private final Vertx vertx;
  private final ProbeConnection.Connector fallback;
  private final ProbeConnection.Connector connector;

  public TcpProber(Vertx vertx) {
    this(vertx, SourceAddress.KERNEL);
  }

  /** Every probe's connection bound to {@code source} ({@code --probe-source-address}). */
  public TcpProber(Vertx vertx, SourceAddress source) {
    this.vertx = vertx;
    this.fallback = ProbeConnection.tls(vertx, source);
    this.connector = ProbeConnection.plain(vertx, fallback, source);
  }

  @Override
  public Future<ProbeResult> probe(ProbeTarget target, CheckSpec spec) {
    long start = System.nanoTime();
    try {
      Promise<ProbeResult> promise = Promise.promise();
      new Attempt(spec, start, promise).start(new ProbeTarget(target.ip(), spec.portFor(target)));
      return promise.future();
    } catch (RuntimeException e) {
      return Future.succeededFuture(ProbeResult.proberError(e, start));
    }
  }

  @Override
  public Future<Void> close() {
    return fallback.close();
  }

  private final class Attempt implements ProbeConnection.Receiver {
    final CheckSpec spec;
    final long start;
    final Promise<ProbeResult> promise;
    final byte[] expect;
    final byte[] got;
    int gotLength;
    io.netty.util.concurrent.ScheduledFuture<?> deadline;
    ProbeConnection connection;
    boolean done;

    Attempt(CheckSpec spec, long start, Promise<ProbeResult> promise) {
      this.spec = spec;
      this.start = start;
      this.promise = promise;
      this.expect = spec.tcp().expectBytes();
      this.got = new byte[expect.length];
    }

    void start(ProbeTarget target) {
      long timeout = spec.timeout().toMillis();
      deadline = ProbeDeadline.schedule(vertx, timeout, () -> finish(ProbeResult.timeout(timeout)));
      (spec.usesTls() ? fallback : connector)
          .connect(
              target,
              spec,
              (int) timeout,
              (c, failure) -> {
                if (done) {
                  if (failure == null) {
                    c.close();
                  }
                } else if (failure != null) {
                  finish(TransportFailure.classify(failure, elapsed()));
                } else {
                  connected(c);
                }
              });
    }

    void connected(ProbeConnection c) {
      connection = c;
      if (spec.tcp().send() != null) {
        c.write(spec.tcp().send().getBytes(StandardCharsets.UTF_8));
      }
      if (expect.length == 0) {
        finish(ProbeResult.pass("connected", elapsed()));
        return;
      }
      c.receive(this);
    }

    @Override
    public void onError(Throwable failure) {
      finish(TransportFailure.classify(failure, elapsed()));
    }

    @Override
    public void onClose() {
      finish(
          gotLength == 0
              ? TransportFailure.closed(elapsed())
              : ProbeResult.fail(Reason.EXPECT_MISMATCH, "reply shorter than expected", elapsed()));
    }

    @Override
    public void onData(byte[] bytes, int offset, int length) {
      if (done) {
        return;
      }
      int n = Math.min(length, expect.length - gotLength);
      System.arraycopy(bytes, offset, got, gotLength, n);
      gotLength += n;
      if (!Arrays.equals(got, 0, gotLength, expect, 0, gotLength)) {
        finish(ProbeResult.fail(Reason.EXPECT_MISMATCH, "reply does not match expect", elapsed()));
      } else if (gotLength == expect.length) {
        finish(ProbeResult.pass("reply matches", elapsed()));
      }
    }

    long elapsed() {
      return ProbeResult.elapsedMs(start);
    }

    void finish(ProbeResult result) {
      if (done) {
        return;
      }
      done = true;
      if (deadline != null) {
        deadline.cancel(false);
      }
      if (connection != null) {
        connection.receive(null);
        connection.close();
      }
      promise.complete(result);
    }
  }
}
