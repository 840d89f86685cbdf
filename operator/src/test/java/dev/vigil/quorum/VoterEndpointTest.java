package dev.vigil.quorum;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.api.v1alpha1.HealthPolicy;
import dev.vigil.demo.DemoBackend;
import dev.vigil.demo.EmbeddedApiServer;
import dev.vigil.passive.IntakeLimits;
import dev.vigil.peer.PeerAuth;
import dev.vigil.peer.PeerClient;
import dev.vigil.probe.ConfirmingProbe.Vote;
import dev.vigil.probe.http.HttpProber;
import dev.vigil.reconcile.TenantFloors;
import dev.vigil.security.Identity;
import dev.vigil.security.Permission;
import dev.vigil.security.Reviewer;
import dev.vigil.security.Reviews;
import dev.vigil.security.TokenBuckets;
import dev.vigil.testing.Fixtures;
import dev.vigil.testing.TestTls;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.WorkerExecutor;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.net.PemKeyCertOptions;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A voter's endpoint and an owner's client over real TLS on loopback (docs/design.md §8): the voter
 * answers on backends it probes itself, with the pool's check read from the API server (the Fabric8
 * mock server in CRUD mode); only this installation's user may ask; the owner sends its token only
 * to a voter presenting its own certificate, not any certificate of the same CA.
 */
class VoterEndpointTest {
  private static final String NS = "shop";
  private static final String OWN = "own-token";
  private static final String OTHER = "other-token";

  private final Vertx vertx = Vertx.vertx();
  private final EmbeddedApiServer api = EmbeddedApiServer.start();
  private final WorkerExecutor workers = vertx.createSharedWorkerExecutor("test-voter", 2);
  private final AtomicInteger asked = new AtomicInteger();
  private VoterEndpoint voter;

  /** {@link #OWN} is the installation's ServiceAccount, {@link #OTHER} a tenant's. */
  private static final Reviewer REVIEWER =
      new Reviewer() {
        @Override
        public Optional<Identity> authenticate(String token) {
          return switch (token) {
            case OWN -> Optional.of(identity("system:serviceaccount:vigil-system:vigil"));
            case OTHER -> Optional.of(identity("system:serviceaccount:shop:proxy"));
            default -> Optional.empty();
          };
        }

        @Override
        public boolean allows(Identity caller, Permission permission) {
          return true;
        }
      };

  private static Identity identity(String user) {
    return new Identity(user, "uid-" + user, List.of(), Map.of());
  }

  @AfterEach
  void close() throws Exception {
    vertx.close().await(10, TimeUnit.SECONDS);
    api.close();
  }

  /** The voter on a TLS server with {@code cert}; returns its port. */
  private int serve(PemKeyCertOptions cert) throws Exception {
    IntakeLimits limits = IntakeLimits.defaults();
    Reviews reviews =
        new Reviews(
            REVIEWER,
            workers,
            limits.reviewPolicy(),
            new TokenBuckets(100, 100, 100, System::currentTimeMillis),
            System::currentTimeMillis);
    voter =
        new VoterEndpoint(
            new HttpProber(vertx),
            new PoolChecks(api.client(), TenantFloors.NONE, workers, System::currentTimeMillis),
            new PeerAuth(reviews, () -> OWN),
            "zone-b",
            workers);
    HttpServer server =
        vertx
            .createHttpServer(
                new HttpServerOptions().setSsl(true).setKeyCertOptions(cert).setHost("127.0.0.1"))
            .requestHandler(
                req -> {
                  asked.incrementAndGet();
                  voter.handle(req);
                });
    return server.listen(0).await(10, TimeUnit.SECONDS).actualPort();
  }

  private int serveOwnCertificate() throws Exception {
    return serve(
        new PemKeyCertOptions()
            .setCertPath(TestTls.certFile().toString())
            .setKeyPath(TestTls.keyFile().toString()));
  }

  /** The clients made, held: Vert.x closes an HTTP client that is garbage collected. */
  private final List<PeerClient> clients = new java.util.ArrayList<>();

  private Asker client(String token) throws Exception {
    byte[] own = Files.readAllBytes(TestTls.certFile());
    PeerClient c = new PeerClient(vertx, () -> token, () -> own);
    clients.add(c);
    return new Asker(c);
  }

  /** An owner's question, as {@link PeerConfirmer} asks it. */
  private record Asker(PeerClient client) {
    Future<Ballot.Answer> ask(String address, Ballot.Question q, long waitMs) {
      return client.post(address, VoterEndpoint.PATH, q, Ballot.Answer.class, waitMs);
    }
  }

  private void pool(String interval, String timeout) {
    HealthPolicy policy = Fixtures.policy(NS, "fast", interval, timeout);
    api.client().resource(policy).create();
    api.client().resource(Fixtures.pool(NS, "web", "fast", "web", 8080)).create();
  }

  private DemoBackend backend(String host, int port, DemoBackend.Mode mode) throws Exception {
    DemoBackend b = new DemoBackend(vertx, host, port);
    b.start().await(10, TimeUnit.SECONDS);
    b.set(mode).await(10, TimeUnit.SECONDS);
    return b;
  }

  private static int freePort(String host) throws Exception {
    try (var s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getByName(host))) {
      return s.getLocalPort();
    }
  }

  private static Ballot.Question question(long timeoutMs, Ballot.Backend... backends) {
    return new Ballot.Question(NS, "web", timeoutMs, List.of(backends));
  }

  @Test
  void votesUpOnALiveBackendAndDownOnADeadOneProbingThemItself() throws Exception {
    pool("200ms", "100ms");
    int port = freePort("127.0.0.61");
    DemoBackend live = backend("127.0.0.61", port, DemoBackend.Mode.HEALTHY);
    DemoBackend dead = backend("127.0.0.62", port, DemoBackend.Mode.FAILING);
    int voterPort = serveOwnCertificate();
    Ballot.Answer answer =
        client(OWN)
            .ask(
                "127.0.0.1:" + voterPort,
                question(
                    5_000,
                    new Ballot.Backend("web-0", live.host(), port),
                    new Ballot.Backend("web-1", dead.host(), port)),
                10_000)
            .await(15, TimeUnit.SECONDS);
    assertThat(answer.zone()).isEqualTo("zone-b");
    assertThat(answer.votes()).isEqualTo(Map.of("web-0", Vote.UP, "web-1", Vote.DOWN));
    // its own probes, counted at the backends: rise 2 on the live one, fall 3 on the dead one
    assertThat(live.requests()).isGreaterThanOrEqualTo(2);
    assertThat(dead.failedHealthChecks()).isGreaterThanOrEqualTo(3);
    assertThat(voter.voting()).isZero();
  }

  @Test
  void refusesEveryoneButThisInstallationAndProbesNothingForThem() throws Exception {
    pool("200ms", "100ms");
    int port = freePort("127.0.0.63");
    DemoBackend b = backend("127.0.0.63", port, DemoBackend.Mode.HEALTHY);
    int voterPort = serveOwnCertificate();
    Ballot.Question q = question(1_000, new Ballot.Backend("web-0", b.host(), port));
    for (String token : List.of(OTHER, "made-up", "")) {
      Future<Ballot.Answer> refused = client(token).ask("127.0.0.1:" + voterPort, q, 5_000);
      assertThat(refused.toCompletionStage().toCompletableFuture())
          .as(token)
          .failsWithin(Duration.ofSeconds(10))
          .withThrowableThat()
          .withMessageContaining(token.isEmpty() ? "answered 401" : "answered 403");
    }
    assertThat(b.requests()).as("probes made for strangers").isZero();
  }

  @Test
  void sendsItsTokenOnlyToAVoterWithItsOwnCertificateNotAnotherOfTheSameAuthority()
      throws Exception {
    pool("200ms", "100ms");
    var impostor =
        TestTls.ca().issue("localhost", List.of("localhost", "127.0.0.1"), Duration.ofDays(1));
    int voterPort = serve(impostor.keyCertOptions());
    Future<Ballot.Answer> ask =
        client(OWN)
            .ask(
                "127.0.0.1:" + voterPort,
                question(1_000, new Ballot.Backend("web-0", "127.0.0.64", 8080)),
                5_000);
    assertThat(ask.toCompletionStage().toCompletableFuture()).failsWithin(Duration.ofSeconds(10));
    assertThat(asked).as("requests the impostor received").hasValue(0);
  }

  @Test
  void abstainsOnAPoolItCannotResolveAndWhenTheTimeoutComesFirst() throws Exception {
    int voterPort = serveOwnCertificate();
    Ballot.Answer unknown =
        client(OWN)
            .ask(
                "127.0.0.1:" + voterPort,
                question(1_000, new Ballot.Backend("web-0", "127.0.0.65", 8080)),
                5_000)
            .await(10, TimeUnit.SECONDS);
    assertThat(unknown.votes()).isEqualTo(Map.of("web-0", Vote.ABSTAIN));

    pool("1s", "500ms");
    int port = freePort("127.0.0.66");
    DemoBackend hung = backend("127.0.0.66", port, DemoBackend.Mode.HANG);
    Ballot.Answer late =
        client(OWN)
            .ask(
                "127.0.0.1:" + voterPort,
                question(200, new Ballot.Backend("web-0", hung.host(), port)),
                5_000)
            .await(10, TimeUnit.SECONDS);
    assertThat(late.votes()).isEqualTo(Map.of("web-0", Vote.ABSTAIN));
  }
}
