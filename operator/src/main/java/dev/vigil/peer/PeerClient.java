package dev.vigil.peer;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.net.ClientSSLOptions;
import io.vertx.core.net.PemTrustOptions;
import io.vertx.core.net.SocketAddress;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * One replica's calls to another (docs/design.md §8, and the outcomes forwarded to a pool's owner,
 * docs/passive.md): a JSON {@code POST} to the address on the peer's shard Lease, with this
 * replica's ServiceAccount token.
 *
 * <p>Whom the token goes to: every replica serves the same certificate (one Secret), so the peer
 * must present exactly this replica's own serving certificate (pinned: the first certificate of its
 * PEM, read again at each call so a rotation follows). A Pod IP is in no certificate's names, so
 * the host name is not checked; the pin is stronger than a name. During a rotation a peer still on
 * the old certificate fails the handshake.
 *
 * <p>A call that fails says whether the request may have reached the peer: {@link NotSent} when the
 * connection (or its handshake) failed, so the peer cannot have acted on it; {@link Refused} when
 * the peer answered another status than 200; anything else (a timeout, a reset after the request
 * went out) leaves it unknown.
 */
public final class PeerClient {
  private static final ObjectMapper JSON =
      new ObjectMapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);
  private static final String BEGIN = "-----BEGIN CERTIFICATE-----";
  private static final String END = "-----END CERTIFICATE-----";

  /** The connection to the peer failed: the request never reached it. */
  public static final class NotSent extends RuntimeException {
    NotSent(String address, Throwable cause) {
      super("could not reach " + address + ": " + cause.getMessage(), cause);
    }
  }

  /** The peer answered, with a status other than 200. */
  public static final class Refused extends RuntimeException {
    private final int status;

    Refused(String address, int status) {
      super("the peer at " + address + " answered " + status);
      this.status = status;
    }

    public int status() {
      return status;
    }
  }

  private final HttpClient http;
  private final Supplier<String> token;
  private final Supplier<byte[]> certificate;

  /**
   * @param token this replica's ServiceAccount token now
   * @param certificate this replica's serving certificate now (PEM)
   */
  public PeerClient(Vertx vertx, Supplier<String> token, Supplier<byte[]> certificate) {
    this.http = vertx.createHttpClient(new HttpClientOptions());
    this.token = token;
    this.certificate = certificate;
  }

  /**
   * Posts {@code body} as JSON to {@code path} on the peer at {@code address} and reads its 200
   * answer as {@code answer}; fails when it gives none within {@code waitMs}.
   */
  public <T> Future<T> post(
      String address, String path, Object body, Class<T> answer, long waitMs) {
    SocketAddress server;
    byte[] bytes;
    try {
      server = socketAddress(address);
      bytes = JSON.writeValueAsBytes(body);
    } catch (IOException | IllegalArgumentException e) {
      return Future.failedFuture(e);
    }
    RequestOptions options =
        new RequestOptions()
            .setMethod(HttpMethod.POST)
            .setServer(server)
            .setHost(server.host())
            .setPort(server.port())
            .setURI(path)
            .setSsl(true)
            .setSslOptions(pinned())
            .setConnectTimeout(Math.min(waitMs, 5_000))
            .setIdleTimeout(waitMs)
            .putHeader(HttpHeaders.AUTHORIZATION, "Bearer " + token.get())
            .putHeader(HttpHeaders.CONTENT_TYPE, "application/json");
    return http.request(options)
        .recover(e -> Future.failedFuture(new NotSent(address, e)))
        .compose(req -> req.send(Buffer.buffer(bytes)))
        .compose(
            res ->
                res.statusCode() == 200
                    ? res.body()
                    : Future.failedFuture(new Refused(address, res.statusCode())))
        .map(b -> read(b, answer))
        .timeout(waitMs, TimeUnit.MILLISECONDS);
  }

  public Future<Void> close() {
    return http.close();
  }

  private ClientSSLOptions pinned() {
    return new ClientSSLOptions()
        .setHostnameVerificationAlgorithm("")
        .setTrustOptions(
            new PemTrustOptions().addCertValue(Buffer.buffer(first(certificate.get()))));
  }

  /** The first certificate of a PEM bundle (the leaf; not the CA that also signs others). */
  static String first(byte[] pem) {
    String text = new String(pem, StandardCharsets.US_ASCII);
    int begin = text.indexOf(BEGIN);
    int end = text.indexOf(END, Math.max(begin, 0));
    if (begin < 0 || end < 0) {
      throw new IllegalStateException("the serving certificate has no PEM certificate");
    }
    return text.substring(begin, end + END.length()) + "\n";
  }

  private static <T> T read(Buffer body, Class<T> type) {
    try {
      return JSON.readValue(body.getBytes(), type);
    } catch (IOException e) {
      throw new IllegalStateException("the peer's answer does not parse: " + e.getMessage(), e);
    }
  }

  /** {@code host:port} or {@code [v6]:port}. */
  static SocketAddress socketAddress(String address) {
    int colon = address.lastIndexOf(':');
    if (colon <= 0 || colon == address.length() - 1) {
      throw new IllegalArgumentException("not host:port: " + address);
    }
    String host = address.substring(0, colon);
    if (host.startsWith("[") && host.endsWith("]")) {
      host = host.substring(1, host.length() - 1);
    }
    return SocketAddress.inetSocketAddress(Integer.parseInt(address.substring(colon + 1)), host);
  }
}
