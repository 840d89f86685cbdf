package dev.vigil.passive;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.api.v1alpha1.BackendStatus;
import dev.vigil.api.v1alpha1.HealthPolicy;
import dev.vigil.api.v1alpha1.PassiveCheck;
import dev.vigil.demo.DemoBackend;
import dev.vigil.runtime.BackendSnapshot;
import dev.vigil.runtime.PoolKey;
import dev.vigil.runtime.PoolRuntime;
import dev.vigil.security.Identity;
import dev.vigil.security.Permission;
import dev.vigil.security.Reviewer;
import dev.vigil.shard.Rendezvous;
import dev.vigil.shard.ShardLease;
import dev.vigil.shard.Voters;
import dev.vigil.testing.AnswerHoldingRelay;
import dev.vigil.testing.Fixtures;
import dev.vigil.testing.MockCluster;
import dev.vigil.testing.PoolOwners;
import dev.vigil.testing.TestTls;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.micrometer.core.instrument.Counter;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLParameters;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * A reporter's retry after the replica it reached lost its answer (issue 33, routing proof;
 * docs/passive.md, "Sending a batch again"): three sharded replicas of the real operator on the
 * Fabric8 mock server, a reporter that sends a batch through a replica that does not own the pool,
 * behind a relay that lets the request through and holds the answer, as the network does when that
 * replica is killed after the owner applied the batch and before it answered. The reporter gets no
 * answer and sends the same batch to another replica: under the same {@code Idempotency-Key} the
 * owner answers from memory and applies it once (counted where outcomes land: the owner's
 * runtimes); without a key it counts twice, the gap the key closes. And when the pool moved between
 * the try and the retry (a planned move, or its owner's death after its status showed the batch's
 * ejection), the new owner knows the batch from the status it restored (the key's digest beside the
 * ejection) and applies none of it: the backend is ejected once.
 */
class ReporterRetryIT {
  private static final String NS = "shop";
  private static final String POOL = "web";
  private static final int BACKENDS = 3;
  private static final int BATCH = 4;
  private static final String SA_TOKEN = "vigil-sa-token";
  private static final String SA_USER = "system:serviceaccount:vigil-system:vigil";

  /** The installation's own token (peers) and the reporter's ("t"), allowed every pool. */
  private static final Reviewer REVIEWER =
      new Reviewer() {
        @Override
        public Optional<Identity> authenticate(String token) {
          if (SA_TOKEN.equals(token)) {
            return Optional.of(new Identity(SA_USER, "uid-vigil", List.of(), Map.of()));
          }
          return token.equals("t")
              ? Optional.of(new Identity("proxy", "uid-proxy", List.of(), Map.of()))
              : Optional.empty();
        }

        @Override
        public boolean allows(Identity caller, Permission permission) {
          return true;
        }
      };

  /** TLS 1.3 (the relay passes its handshake), HTTP/1.1, trusting the test CA. */
  private static final HttpClient HTTP =
      HttpClient.newBuilder()
          .version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(5))
          .sslContext(TestTls.trusting())
          .sslParameters(tls13())
          .build();

  @AutoClose private final MockCluster cluster = MockCluster.start();
  private final KubernetesClient client = cluster.client();
  private final List<MockCluster.Replica> replicas = new ArrayList<>();
  private final List<String> identities = new ArrayList<>();
  private List<DemoBackend> backends;

  private static SSLParameters tls13() {
    SSLParameters p = new SSLParameters();
    p.setProtocols(new String[] {"TLSv1.3"});
    return p;
  }

  /** Three replicas; the pool runs on its owner and every replica reaches the others. */
  private void threeReplicas() {
    pool(1000);
    replicas("replica-a", "replica-b", "replica-c");
  }

  /**
   * The policy, the backends and the pool: {@code consecutiveErrors} in a row eject a backend for 1
   * s (one of three may be out), and the multiplier never decays while the test runs.
   */
  private void pool(int consecutiveErrors) {
    HealthPolicy policy = Fixtures.policy(NS, "fast", "300ms", "250ms");
    PassiveCheck passive = policy.getSpec().getPassive();
    passive.setConsecutiveErrors(consecutiveErrors);
    passive.setBaseEjectionTime("1s");
    passive.setMaxEjectionTime("2s");
    passive.setMaxEjectionPercent(50);
    passive.setSweepInterval("1h");
    client.resource(policy).create();
    backends = cluster.pods(NS, POOL, BACKENDS, 20);
    client.resource(Fixtures.pool(NS, POOL, "fast", POOL, cluster.port())).create();
  }

  /**
   * Starts replicas {@code ids}, then waits until the pool runs and every replica sees the rest.
   */
  private void replicas(String... ids) {
    for (String id : ids) {
      start(id);
    }
    await().atMost(Duration.ofSeconds(40)).until(() -> owner() != null && reachable());
  }

  private MockCluster.Replica start(String id) {
    MockCluster.Replica r =
        cluster.operator(
            cluster.newClient(c -> c.withOauthToken(SA_TOKEN)),
            MockCluster.sharded(
                NS, id, "zone-" + id.substring(id.length() - 1), "--advertise-address=127.0.0.1"),
            o -> o.reviewer(REVIEWER).election(MockCluster.election(id)));
    replicas.add(r);
    identities.add(id);
    return r;
  }

  /** The replica the pool runs on, once its label and status name it; null before. */
  private MockCluster.Replica owner() {
    List<BackendPool> pools = client.resources(BackendPool.class).inNamespace(NS).list().getItems();
    String label = PoolOwners.labels(pools).get(POOL);
    if (label == null
        || pools.get(0).getStatus() == null
        || !label.equals(pools.get(0).getStatus().getShard())) {
      return null;
    }
    MockCluster.Replica r = replicas.get(identities.indexOf(label));
    return r.running().runtimes().contains(new PoolKey(NS, POOL)) ? r : null;
  }

  private boolean reachable() {
    for (MockCluster.Replica r : replicas) {
      List<Voters.Checker> live = r.running().ring().checkers();
      if (live.size() != replicas.size() || live.stream().anyMatch(c -> c.address().isEmpty())) {
        return false;
      }
    }
    return true;
  }

  private static double counter(MockCluster.Replica r, String name) {
    return r.meters().find(name).counters().stream().mapToDouble(Counter::count).sum();
  }

  /** {@value #BATCH} upstream failures of one backend, NDJSON. */
  private String batch() {
    String backend = backends.get(0).host() + ":" + cluster.port();
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < BATCH; i++) {
      b.append("{\"backend\":\"")
          .append(backend)
          .append("\",\"ok\":false,\"status\":503,\"origin\":\"upstream\",\"latencyMs\":3}\n");
    }
    return b.toString();
  }

  private static CompletableFuture<HttpResponse<String>> post(int port, String body, String key) {
    HttpRequest.Builder req =
        HttpRequest.newBuilder(
                URI.create("https://127.0.0.1:" + port + OutcomeIntake.path(NS, POOL)))
            .timeout(Duration.ofSeconds(30))
            .header("Content-Type", "application/x-ndjson")
            .header("Authorization", "Bearer t")
            .POST(HttpRequest.BodyPublishers.ofString(body));
    if (key != null) {
      req.header(IdempotencyKey.HEADER, "\"" + key + "\"");
    }
    return HTTP.sendAsync(req.build(), HttpResponse.BodyHandlers.ofString());
  }

  private static HttpResponse<String> answer(CompletableFuture<HttpResponse<String>> f)
      throws Exception {
    return f.get(30, TimeUnit.SECONDS);
  }

  /**
   * Sends the batch through a relay in front of {@code accepting} that holds the answer, waits
   * until the owner applied it, cuts the reporter's connection: the reporter got no answer.
   */
  private void sendAndLoseTheAnswer(
      MockCluster.Replica accepting, MockCluster.Replica owner, String body, String key)
      throws Exception {
    long before = owner.running().runtimes().outcomesApplied();
    try (AnswerHoldingRelay relay = new AnswerHoldingRelay(accepting.running().outcomePort())) {
      CompletableFuture<HttpResponse<String>> lost = post(relay.port(), body, key);
      await()
          .atMost(Duration.ofSeconds(20))
          .until(() -> owner.running().runtimes().outcomesApplied() == before + BATCH);
      await().atMost(Duration.ofSeconds(10)).until(() -> relay.held() > 0);
      relay.cut();
      try {
        HttpResponse<String> got = lost.get(30, TimeUnit.SECONDS);
        throw new AssertionError("the reporter got an answer through the relay: " + got.body());
      } catch (ExecutionException e) {
        assertThat(e.getCause()).as("the reporter's first try").isInstanceOf(IOException.class);
      }
    }
  }

  /** The replicas other than the owner: the one the first try reaches, the one of the retry. */
  private List<MockCluster.Replica> others(MockCluster.Replica owner) {
    return replicas.stream().filter(r -> r != owner).toList();
  }

  @Test
  void aRetryThroughAnotherReplicaUnderTheSameKeyIsAppliedOnce() throws Exception {
    threeReplicas();
    MockCluster.Replica owner = owner();
    MockCluster.Replica accepting = others(owner).get(0);
    MockCluster.Replica retry = others(owner).get(1);
    String body = batch();
    String key = UUID.randomUUID().toString();

    sendAndLoseTheAnswer(accepting, owner, body, key);
    assertThat(owner.running().runtimes().outcomesApplied()).isEqualTo(BATCH);

    // the reporter's retry: the same batch, the same key, to the next replica
    HttpResponse<String> again = answer(post(retry.running().outcomePort(), body, key));
    assertThat(again.statusCode()).as(again.body()).isEqualTo(200);
    assertThat(new JsonObject(again.body()).getInteger("accepted")).isEqualTo(BATCH);
    assertThat(owner.running().runtimes().outcomesApplied())
        .as("outcomes applied at the owner after the retry through another replica")
        .isEqualTo(BATCH);

    // and once more, straight to the owner (it applies its own pools without a forward)
    HttpResponse<String> atOwner = answer(post(owner.running().outcomePort(), body, key));
    assertThat(atOwner.statusCode()).as(atOwner.body()).isEqualTo(200);
    assertThat(new JsonObject(atOwner.body()).getInteger("accepted")).isEqualTo(BATCH);
    assertThat(owner.running().runtimes().outcomesApplied()).isEqualTo(BATCH);
    assertThat(counter(owner, "vigil_outcome_repeats_total")).isEqualTo(2);

    // the key with another body: refused, nothing applied
    HttpResponse<String> other = answer(post(retry.running().outcomePort(), body + body, key));
    assertThat(other.statusCode()).as(other.body()).isEqualTo(422);
    assertThat(new JsonObject(other.body()).getString("error")).isEqualTo("idempotency_key_reused");
    assertThat(other.body()).contains(IdempotencyKey.HEADER);
    assertThat(owner.running().runtimes().outcomesApplied()).isEqualTo(BATCH);
  }

  /** A replica name that, joining, outranks every running replica for the pool (rendezvous). */
  private String outranking() {
    String uid =
        client
            .resources(BackendPool.class)
            .inNamespace(NS)
            .withName(POOL)
            .get()
            .getMetadata()
            .getUid();
    for (int i = 0; ; i++) {
      String id = "replica-j" + i;
      List<String> shards = new ArrayList<>(identities);
      shards.add(id);
      if (id.equals(Rendezvous.assign(Map.of(POOL, uid), shards).get(POOL))) {
        return id;
      }
    }
  }

  /** The backend every batch names, as {@code r}'s runtime of the pool shows it now. */
  private BackendSnapshot reported(MockCluster.Replica r) {
    PoolRuntime runtime = r.running().runtimes().get(new PoolKey(NS, POOL)).orElseThrow();
    return runtime.view().backends().stream()
        .filter(b -> b.member().ip().equals(backends.get(0).host()))
        .findFirst()
        .orElseThrow();
  }

  /**
   * The key's batch ejected the backend at its owner; the answer was lost (the server cannot tell a
   * lost answer from a read one); the pool moved to {@code next}; the retry, through {@code
   * through}, once the ejection ended: the new owner knows the batch from the status it restored
   * and applies none of it (undone, it ejects the backend a second time).
   */
  private void retryIsNotAppliedAgain(
      MockCluster.Replica next, MockCluster.Replica through, String body, String key)
      throws Exception {
    await().atMost(Duration.ofSeconds(10)).until(() -> !reported(next).decision().ejected());
    assertThat(reported(next).decision().multiplier()).as("restored ejections").isEqualTo(1);
    HttpResponse<String> again = answer(post(through.running().outcomePort(), body, key));
    assertThat(again.statusCode()).as(again.body()).isEqualTo(200);
    assertThat(new JsonObject(again.body()).getInteger("accepted")).isEqualTo(BATCH);
    assertThat(reported(next).decision().multiplier())
        .as("ejections of the backend after the retry")
        .isEqualTo(1);
    assertThat(next.running().runtimes().outcomesApplied())
        .as("outcomes the new owner applied for the retry")
        .isZero();
    assertThat(counter(next, "vigil_outcome_repeats_total")).isEqualTo(1);
  }

  /** A planned move (a replica joins that outranks the owner) between the try and the retry. */
  @Test
  void aRetryAfterAPlannedMoveIsNotAppliedAgainByTheNewOwner() throws Exception {
    pool(BATCH);
    replicas("replica-a", "replica-b");
    MockCluster.Replica first = owner();
    String body = batch();
    String key = UUID.randomUUID().toString();
    HttpResponse<String> lost = answer(post(first.running().outcomePort(), body, key));
    assertThat(lost.statusCode()).as(lost.body()).isEqualTo(200);
    assertThat(reported(first).decision().multiplier()).isEqualTo(1);

    MockCluster.Replica next = start(outranking());
    await().atMost(Duration.ofSeconds(40)).until(() -> owner() == next && reachable());
    retryIsNotAppliedAgain(next, first, body, key);
  }

  /**
   * The owner dies (its shard Lease taken over, as the sharder does after a missed renewal: it
   * writes nothing more and hands nothing over) after its status showed the ejection.
   */
  @Test
  void aRetryAfterTheOwnerDiedIsNotAppliedAgainOnceItsEjectionWasInStatus() throws Exception {
    pool(BATCH);
    replicas("replica-a", "replica-b", "replica-c");
    MockCluster.Replica dead = owner();
    String body = batch();
    String key = UUID.randomUUID().toString();
    HttpResponse<String> lost = answer(post(dead.running().outcomePort(), body, key));
    assertThat(lost.statusCode()).as(lost.body()).isEqualTo(200);
    String pod = reported(dead).member().id();
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () -> {
              BackendStatus s = cluster.backendStatus(NS, POOL, pod);
              return s != null && Integer.valueOf(1).equals(s.getEjections());
            });

    String name = ShardLease.leaseName(identities.get(replicas.indexOf(dead)));
    Lease lease = client.leases().inNamespace("vigil-system").withName(name).get();
    lease.getSpec().setHolderIdentity("fenced-by-test");
    client.leases().inNamespace("vigil-system").resource(lease).update();
    await().atMost(Duration.ofSeconds(10)).until(() -> dead.running().runtimes().all().isEmpty());
    await().atMost(Duration.ofSeconds(40)).until(() -> owner() != null && owner() != dead);
    MockCluster.Replica next = owner();
    MockCluster.Replica through =
        replicas.stream().filter(r -> r != dead && r != next).findFirst().orElseThrow();
    retryIsNotAppliedAgain(next, through, body, key);
  }

  /** The gap the key closes: the same lost answer and retry, without a key, count twice. */
  @Test
  void withoutAKeyTheSameRetryIsAppliedTwice() throws Exception {
    threeReplicas();
    MockCluster.Replica owner = owner();
    String body = batch();
    sendAndLoseTheAnswer(others(owner).get(0), owner, body, null);
    HttpResponse<String> again =
        answer(post(others(owner).get(1).running().outcomePort(), body, null));
    assertThat(again.statusCode()).as(again.body()).isEqualTo(200);
    assertThat(owner.running().runtimes().outcomesApplied()).isEqualTo(2 * BATCH);
  }
}
