package dev.vigil.passive;

import dev.vigil.runtime.PoolKey;
import dev.vigil.security.ClientCertificates;
import dev.vigil.security.ConnectionGate;
import dev.vigil.security.RequestHeaders;
import dev.vigil.security.Reviewer;
import dev.vigil.security.ServingCertificate;
import dev.vigil.security.TokenBuckets;
import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.WorkerExecutor;
import io.vertx.core.http.ClientAuth;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.net.ServerSSLOptions;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The passive outcome intake (docs/design.md §4): {@code POST
 * /v1/namespaces/{ns}/backendpools/{name}/ outcomes} on its own TLS-only port takes a batch of one
 * pool's real-request outcomes from a proxy or sidecar and feeds the pool's runtime in one hop.
 *
 * <p>The pool is in the URL so that everything that costs the caller nothing is decided before the
 * body is read: the bearer token (TokenReview for Vigil's audience), the identity's rate, {@code
 * create backendpools/outcomes} on the pool (SubjectAccessReview), where the pool runs ({@link
 * OutcomeRoute}: here, or at the replica that owns it, which the batch is forwarded to (sharded,
 * the pool's owner; a standby of leader election, the leader); a pool that runs nowhere is answered
 * exactly as one the caller may not report for: 403, so no caller learns which pools exist in
 * namespaces it cannot report for) and a share of the bytes-in-flight budget ({@link ByteShares}:
 * shared fairly between source addresses). Only then is the body read, under a byte limit, and
 * parsed as a whole. One deadline covers the whole request; the {@link ConnectionGate} bounds
 * connections (in all and per address) and the time to send a request head. Reviews run on a
 * bounded worker pool and are cached; nothing here blocks an event loop. A refused request changes
 * nothing; a processed one says per rejected item why; replies to callers never carry an API
 * server's message.
 */
public final class OutcomeIntake {
  public static final String PATH_TEMPLATE =
      "/v1/namespaces/{namespace}/backendpools/{name}/outcomes";
  private static final Logger LOG = LoggerFactory.getLogger(OutcomeIntake.class);
  private static final Pattern LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?");
  private static final Pattern SUBDOMAIN =
      Pattern.compile(
          "(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");

  private final Vertx vertx;
  private final IntakeLimits limits;
  private final IntakeMetrics metrics;
  private final IntakeReplies replies;
  private final IntakeExchange.Shared shared;
  private final WorkerExecutor workers;
  private final ServingCertificate certificate;
  private final ClientCertificates clientCertificates;
  private final ConnectionGate gate;
  private final ByteShares bytesInFlight;
  private final MeterRegistry meters;
  private HttpServer server;
  private final Map<String, Handler<HttpServerRequest>> others = new ConcurrentHashMap<>();

  /** Stopping: every request is answered 503 with Connection: close, nothing is applied. */
  private volatile boolean stopping;

  /** How long a stopping intake answers on open connections before it shuts the server down. */
  private static final long STOPPING_MS = 1_000;

  /** How long a shutdown waits for the batches in flight to be answered. */
  private static final long SHUTDOWN_MS = 5_000;

  /**
   * @param route where a pool's outcomes go: its runtime here, or the replica that owns it
   *     (sharded, or the leader when this replica stands by)
   * @param runsPools whether this replica runs BackendPools now (leads, or is the only replica): a
   *     standby whose route does not forward answers 503 {@code not_leader} with Retry-After
   * @param certificate the port's certificate and key (rotations are applied as they come)
   */
  public OutcomeIntake(
      Vertx vertx,
      OutcomeRoute route,
      Reviewer reviewer,
      MeterRegistry meters,
      IntakeLimits limits,
      LongSupplier clock,
      BooleanSupplier runsPools,
      ServingCertificate certificate) {
    this(vertx, route, reviewer, meters, limits, clock, runsPools, certificate, null);
  }

  /**
   * As the other constructor, and callers may identify with a client certificate that a CA of
   * {@code clientCertificates} issued (docs/passive.md, "Client certificates"); null: the port asks
   * for none, and every caller needs a token.
   */
  public OutcomeIntake(
      Vertx vertx,
      OutcomeRoute route,
      Reviewer reviewer,
      MeterRegistry meters,
      IntakeLimits limits,
      LongSupplier clock,
      BooleanSupplier runsPools,
      ServingCertificate certificate,
      ClientCertificates clientCertificates) {
    this.vertx = vertx;
    this.limits = limits;
    this.metrics = new IntakeMetrics(meters);
    this.replies = new IntakeReplies(vertx, limits, metrics);
    this.workers = vertx.createSharedWorkerExecutor("vigil-reviews", 4);
    this.certificate = certificate;
    this.clientCertificates = clientCertificates;
    this.gate = new ConnectionGate(vertx, limits.connectionLimits(), metrics::connectionClosed);
    this.bytesInFlight = new ByteShares(limits.maxBytesInFlight());
    this.meters = meters;
    this.shared =
        new IntakeExchange.Shared(
            vertx,
            route,
            limits,
            metrics,
            new OutcomeParser(limits, clock),
            new PoolQueues(limits.queuePerPool()),
            limits.reviewBudget().reviews(reviewer, workers, clock),
            new TokenBuckets(
                limits.requestsPerSecond(),
                limits.requestBurst(),
                limits.maxCachedReviews(),
                clock),
            runsPools,
            bytesInFlight,
            replies,
            clientCertificates);
  }

  /** The URL path of a pool's outcomes. */
  public static String path(String namespace, String name) {
    return "/v1/namespaces/" + namespace + "/backendpools/" + name + "/outcomes";
  }

  /**
   * Serves another endpoint of this port (the voters' {@code /v1/confirmations}, docs/design.md §8)
   * behind the same TLS, connection gate and stop: requests for exactly {@code path} go to {@code
   * handler}, which authenticates them itself.
   */
  public void serve(String path, Handler<HttpServerRequest> handler) {
    others.put(path, handler);
  }

  /**
   * Also takes OTLP logs on this port (docs/passive.md, "OTLP receiver"): OTLP/gRPC and {@code POST
   * /v1/logs}, under this intake's reviews, limits and stop; records are mapped to pools through
   * {@code addresses} with {@code profiles} (tried in order for exports that name none).
   */
  public OtlpReceiver receiveOtlp(BackendAddresses addresses, List<OtlpProfile> profiles) {
    OtlpReceiver otlp = new OtlpReceiver(shared, new OtlpRecords(addresses, profiles), meters);
    serve(OtlpReceiver.HTTP_PATH, otlp.http());
    serve(OtlpReceiver.GRPC_PATH, otlp.grpc());
    return otlp;
  }

  /** Listens with TLS on the port (0 = a free one); the future holds the bound port. */
  public Future<Integer> listen(String host, int port) {
    ServerSSLOptions kept = new ServerSSLOptions();
    if (clientCertificates != null) {
      // asked, not required: callers without a certificate authenticate with a token
      kept.setClientAuth(ClientAuth.REQUEST).setTrustOptions(clientCertificates.trustOptions());
    }
    HttpServer s =
        vertx.createHttpServer(
            new HttpServerOptions()
                .setClientAuth(kept.getClientAuth())
                .setTrustOptions(kept.getTrustOptions())
                .setHost(host)
                .setPort(port)
                .setSsl(true)
                // HTTP/2 through ALPN: OTLP/gRPC shares the port (HTTP/1.1 reporters are unchanged)
                .setUseAlpn(true)
                .setKeyCertOptions(certificate.options())
                .setSslHandshakeTimeout(Math.max(1, limits.requestTimeoutMs()))
                .setSslHandshakeTimeoutUnit(TimeUnit.MILLISECONDS)
                .setIdleTimeout((int) Math.max(1, limits.requestTimeoutMs() / 1000 * 6))
                .setIdleTimeoutUnit(TimeUnit.SECONDS));
    gate.guard(s, this::handle);
    certificate.serve(s, kept);
    return s.listen()
        .map(
            bound -> {
              server = bound;
              LOG.info("outcome intake listening (TLS) on {}:{}", host, bound.actualPort());
              return bound.actualPort();
            });
  }

  /**
   * Stops taking outcomes without leaving a reporter unanswered: while connections are open, for
   * {@code STOPPING_MS} every new request is answered 503 with Retry-After and {@code Connection:
   * close} (a reporter's kept-alive connection gets an answer, not a reset, and its retry reaches
   * another replica); then the server shuts down, answering the batches still in flight (for at
   * most {@code SHUTDOWN_MS}) before it closes their connections. A batch answered 2xx was applied;
   * one that got no answer was never read.
   */
  public Future<Void> close() {
    stopping = true;
    Future<Void> closing;
    if (server == null) {
      closing = Future.succeededFuture();
    } else {
      HttpServer s = server;
      Future<Void> answered =
          gate.connections() == 0 ? Future.succeededFuture() : vertx.timer(STOPPING_MS).mapEmpty();
      closing = answered.compose(v -> s.shutdown(SHUTDOWN_MS, TimeUnit.MILLISECONDS));
    }
    return closing.eventually(
        () -> {
          certificate.close();
          if (clientCertificates != null) {
            clientCertificates.close();
          }
          return workers.close();
        });
  }

  /** Open connections and body bytes reserved now (for tests and the load run). */
  int connections() {
    return gate.connections();
  }

  long bytesInFlight() {
    return bytesInFlight.held();
  }

  private void handle(HttpServerRequest req) {
    req.pause();
    if (stopping) {
      refuseWhileStopping(req);
      return;
    }
    var other = others.get(req.path());
    if (other != null) {
      other.handle(req);
      return;
    }
    PoolKey pool = route(req.path());
    if (pool == null) {
      notFound(req);
      return;
    }
    if (req.method() != HttpMethod.POST) {
      req.response().putHeader(HttpHeaders.ALLOW, "POST");
      replies.refuse(req, 405, "method_not_allowed", "use POST " + PATH_TEMPLATE);
      return;
    }
    String token = RequestHeaders.bearer(req.getHeader(HttpHeaders.AUTHORIZATION));
    ClientCertificates.Verdict cert = shared.certificate(req.connection());
    if (token == null && !cert.verified()) {
      replies.refuse(
          req,
          401,
          "unauthenticated",
          "send Authorization: Bearer <ServiceAccount token>" + cert.refusalNote());
      return;
    }
    OutcomeParser.Format format = format(req.getHeader(HttpHeaders.CONTENT_TYPE));
    if (format == null) {
      replies.refuse(
          req,
          415,
          "unsupported_media_type",
          "Content-Type must be application/json (an array) or application/x-ndjson");
      return;
    }
    long declared = RequestHeaders.contentLength(req.getHeader(HttpHeaders.CONTENT_LENGTH));
    if (declared > limits.maxBodyBytes()) {
      replies.refuse(req, 413, "body_too_large", replies.tooLarge());
      return;
    }
    String idempotencyKey;
    try {
      idempotencyKey = IdempotencyKey.parse(req.getHeader(IdempotencyKey.HEADER));
    } catch (IdempotencyKey.Invalid e) {
      replies.refuse(req, 400, "invalid_idempotency_key", e.getMessage());
      return;
    }
    new IntakeExchange(
            shared,
            req,
            pool,
            cert,
            token,
            idempotencyKey,
            format,
            declared,
            vertx.getOrCreateContext())
        .start();
  }

  private void refuseWhileStopping(HttpServerRequest req) {
    req.response()
        .putHeader(HttpHeaders.RETRY_AFTER, "2")
        .putHeader(HttpHeaders.CONNECTION, "close");
    replies.refuse(req, 503, "stopping", "this replica is stopping; nothing was applied, retry");
  }

  private void notFound(HttpServerRequest req) {
    replies.refuse(
        req,
        404,
        "not_found",
        "outcomes go to POST "
            + PATH_TEMPLATE
            + " with Kubernetes names"
            + (req.path().equals("/v1/outcomes")
                ? " (the multi-pool /v1/outcomes is gone: the pool is authorized before the body"
                    + " is read)"
                : ""));
  }

  /** The pool of {@code /v1/namespaces/{ns}/backendpools/{name}/outcomes}, or null. */
  static PoolKey route(String path) {
    String[] p = path.split("/", -1);
    if (p.length != 7
        || !p[0].isEmpty()
        || !p[1].equals("v1")
        || !p[2].equals("namespaces")
        || !p[4].equals("backendpools")
        || !p[6].equals("outcomes")
        || !LABEL.matcher(p[3]).matches()
        || !SUBDOMAIN.matcher(p[5]).matches()) {
      return null;
    }
    return new PoolKey(p[3], p[5]);
  }

  /** The caller's IP address: what failed authentications are counted by. */
  static String source(HttpServerRequest req) {
    var address = req.remoteAddress();
    return address == null || address.hostAddress() == null ? "" : address.hostAddress();
  }

  static OutcomeParser.Format format(String contentType) {
    if (contentType == null) {
      return null;
    }
    int semi = contentType.indexOf(';');
    String type =
        (semi < 0 ? contentType : contentType.substring(0, semi))
            .trim()
            .toLowerCase(java.util.Locale.ROOT);
    return switch (type) {
      case "application/json" -> OutcomeParser.Format.JSON_ARRAY;
      case "application/x-ndjson", "application/jsonl", "application/jsonlines" ->
          OutcomeParser.Format.NDJSON;
      default -> null;
    };
  }
}
