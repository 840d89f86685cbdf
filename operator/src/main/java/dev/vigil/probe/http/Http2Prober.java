package dev.vigil.probe.http;

import dev.vigil.probe.CheckSpec;
import dev.vigil.probe.ProbeResult;
import dev.vigil.probe.ProbeTarget;
import dev.vigil.probe.Prober;
import dev.vigil.probe.Reason;
import dev.vigil.probe.transport.ClientTls;
import dev.vigil.probe.transport.SourceAddress;
import dev.vigil.probe.transport.TlsClientSet;
import dev.vigil.probe.transport.TlsDiagnosis;
import dev.vigil.probe.transport.TransportFailure;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpClientRequest;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpVersion;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.http.StreamResetException;
import java.util.List;
import java.util.Map;

/**
 * HTTP and HTTPS checks over HTTP/2 ({@code active.http.version: "2"}) with Vert.x's HTTP/2 client:
 * h2c with prior knowledge in clear, ALPN {@code h2} over TLS (a server that does not offer h2
 * fails). The verdict comes from the {@code :status} pseudo-header the same way as for HTTP/1.1
 * (expected, fail-fast, or an ordinary failure), then, only when it passes, {@code headerMatch}
 * over the response headers and {@code bodyMatch} over the first 64 KiB of the body (the stream is
 * reset once that much is in). One deadline for the whole probe; the stream is reset when it
 * passes. The connection is kept between probes (HTTP/2's normal mode) in the client's pool; a
 * stream the server resets fails with {@link Reason#STREAM_RESET}.
 */
public final class Http2Prober implements Prober {

  private final Vertx vertx;
  private final HttpClient clear;
  private final TlsClientSet<HttpClient> tls;
  private final TlsDiagnosis diagnosis;
  private final PatternCosts patterns = PatternCosts.measuringThreadCpu();

  public Http2Prober(Vertx vertx) {
    this(vertx, SourceAddress.KERNEL);
  }

  /** Every probe's connection bound to {@code source} ({@code --probe-source-address}). */
  public Http2Prober(Vertx vertx, SourceAddress source) {
    this.vertx = vertx;
    this.clear =
        vertx.createHttpClient(
            source.applyTo(
                new HttpClientOptions()
                    .setProtocolVersion(HttpVersion.HTTP_2)
                    .setHttp2ClearTextUpgrade(false)
                    .setTcpNoDelay(true)));
    this.tls =
        new TlsClientSet<>(
            Http2Prober::tls,
            source,
            vertx::createHttpClient,
            HttpClient::close,
            System::currentTimeMillis);
    this.diagnosis = new TlsDiagnosis(vertx, source);
  }

  /** ALPN h2 only; {@code sni}: the serverName goes out as SNI (never a Pod IP, RFC 6066). */
  private static HttpClientOptions tls(boolean trustAll, boolean sni) {
    return new HttpClientOptions()
        .setProtocolVersion(HttpVersion.HTTP_2)
        .setSsl(true)
        .setUseAlpn(true)
        .setAlpnVersions(List.of(HttpVersion.HTTP_2))
        .setTrustAll(trustAll)
        .setVerifyHost(!trustAll)
        .setForceSni(sni)
        .setTcpNoDelay(true);
  }

  private HttpClient client(CheckSpec spec) {
    if (!spec.usesTls()) {
      return clear;
    }
    return tls.get(spec.tls(), ClientTls.sniName(spec) != null);
  }

  @Override
  public Future<ProbeResult> probe(ProbeTarget target, CheckSpec spec) {
    long start = System.nanoTime();
    try {
      return new Http2Exchange(new ProbeTarget(target.ip(), spec.portFor(target)), spec, start)
          .run();
    } catch (RuntimeException e) {
      return Future.succeededFuture(ProbeResult.proberError(e, start));
    }
  }

  @Override
  public Future<Void> close() {
    return Future.all(List.of(clear.close(), tls.close(), diagnosis.close())).mapEmpty();
  }

  /** One probe: a stream on a pooled connection, the verdict, then the stream's end or reset. */
  private final class Http2Exchange {
    final ProbeTarget target;
    final CheckSpec spec;
    final long start;
    final Promise<ProbeResult> promise = Promise.promise();
    HttpClientRequest request;
    long timer;

    Http2Exchange(ProbeTarget target, CheckSpec spec, long start) {
      this.target = target;
      this.spec = spec;
      this.start = start;
    }

    Future<ProbeResult> run() {
      long timeout = spec.timeout().toMillis();
      timer = vertx.setTimer(timeout, id -> finish(ProbeResult.timeout(timeout)));
      CheckSpec.Http http = spec.http();
      String sni = spec.usesTls() ? ClientTls.sniName(spec) : null;
      RequestOptions options =
          new RequestOptions()
              .setServer(ClientTls.address(target, sni))
              .setMethod(HttpMethod.valueOf(http.method()))
              .setURI(http.path())
              .setConnectTimeout(timeout)
              .putHeader("user-agent", "vigil-probe");
      if (http.host() != null) {
        options.setHost(hostOnly(http.host()));
      }
      for (Map.Entry<String, String> h : http.headers().entrySet()) {
        if (h.getKey().equalsIgnoreCase("Host")) {
          options.setHost(hostOnly(h.getValue()));
        } else {
          options.putHeader(h.getKey(), h.getValue());
        }
      }
      client(spec)
          .request(options)
          .compose(
              r -> {
                request = r;
                if (promise.future().isComplete()) {
                  r.reset();
                }
                byte[] body = http.bodyBytes();
                return body == null ? r.send() : r.send(Buffer.buffer(body));
              })
          .onSuccess(this::onResponse)
          .onFailure(
              t -> diagnosis.explain(target, spec, failure(t), timeout).onComplete(this::finish));
      return promise.future();
    }

    void onResponse(HttpClientResponse response) {
      CheckSpec.Http http = spec.http();
      int code = response.statusCode();
      ProbeResult status =
          StatusLineClassifier.verdict(
              http.expectedStatuses(), http.failFastStatuses(), code, elapsed());
      if (!status.passed()) {
        finish(status);
        return;
      }
      String mismatch =
          HeaderCheck.firstMismatch(http.headerMatch(), response.headers()::getAll, patterns);
      if (mismatch != null) {
        finish(new ProbeResult(false, Reason.HEADER_MISMATCH, code, mismatch, elapsed()));
        return;
      }
      if (http.bodyMatch() == null) {
        finish(status);
        return;
      }
      Buffer kept = Buffer.buffer();
      boolean[] truncated = {false};
      response.exceptionHandler(t -> finish(failure(t)));
      response.handler(
          data -> {
            int room = HttpResponseParser.BODY_LIMIT - kept.length();
            if (data.length() > room) {
              truncated[0] = true;
              kept.appendBuffer(data, 0, room);
              finish(bodyVerdict(code, kept, true));
            } else {
              kept.appendBuffer(data);
            }
          });
      response.endHandler(v -> finish(bodyVerdict(code, kept, truncated[0])));
    }

    ProbeResult bodyVerdict(int code, Buffer kept, boolean truncated) {
      PatternCosts.Found found = patterns.find(spec.http().bodyMatch(), kept.toString());
      if (found.found()) {
        return ProbeResult.httpStatus(true, code, elapsed());
      }
      return new ProbeResult(
          false,
          Reason.BODY_MISMATCH,
          code,
          found.refused()
              ? "bodyMatch " + found.refusal()
              : "body does not match" + (truncated ? " (first 64 KiB)" : ""),
          elapsed());
    }

    ProbeResult failure(Throwable t) {
      for (Throwable c = t; c != null; c = c.getCause()) {
        if (c instanceof StreamResetException reset) {
          return ProbeResult.fail(
              Reason.STREAM_RESET, "stream reset (code " + reset.getCode() + ")", elapsed());
        }
      }
      ProbeResult transport = TransportFailure.classify(t, elapsed());
      if (transport.reason() != Reason.CONNECTION_ERROR) {
        return transport;
      }
      return ProbeResult.fail(
          Reason.MALFORMED_RESPONSE, "not an HTTP/2 answer: " + transport.detail(), elapsed());
    }

    void finish(io.vertx.core.AsyncResult<ProbeResult> ar) {
      finish(ar.succeeded() ? ar.result() : ProbeResult.proberError(ar.cause(), start));
    }

    /** Delivers the first verdict; resets the stream if it is still open. */
    void finish(ProbeResult result) {
      if (!promise.tryComplete(result)) {
        return;
      }
      vertx.cancelTimer(timer);
      HttpClientRequest r = request;
      if (r != null) {
        r.reset(); // frees the stream; nothing happens when it already ended
      }
    }

    long elapsed() {
      return ProbeResult.elapsedMs(start);
    }
  }

  /** The host of a Host value ({@code name:port} or a bracketed IPv6 literal with a port). */
  private static String hostOnly(String host) {
    int colon = host.lastIndexOf(':');
    boolean port =
        colon > 0 && host.indexOf(':') == colon || host.startsWith("[") && host.contains("]:");
    return port ? host.substring(0, colon) : host;
  }
}
