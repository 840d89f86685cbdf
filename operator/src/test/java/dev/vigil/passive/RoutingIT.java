package dev.vigil.passive;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.api.v1alpha1.HealthPolicy;
import dev.vigil.api.v1alpha1.PassiveCheck;
import dev.vigil.demo.DemoBackend;
import dev.vigil.security.Identity;
import dev.vigil.security.Permission;
import dev.vigil.security.Reviewer;
import dev.vigil.shard.Voters;
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
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * Routing between replicas (issue 33, item 3; docs/passive.md): three sharded replicas of the real
 * operator on the Fabric8 mock server, real loopback backends, a reporter that sends each batch to
 * one replica, whichever owns the pool. Every batch is accepted at its first request; the outcomes
 * are counted where they land, in the pools' runtimes (applied outcomes) and in status (ejections),
 * never in the router; while a replica stops and another is fenced (its Lease taken over, as after
 * it died) during reporting, no accepted outcome is lost and none is applied twice.
 */
class RoutingIT {
  static final String NS = "shop";
  private static final String LEASE_NS = "vigil-system";
  private static final int POOLS = 6;
  private static final int PER_POOL = 3;
  static final int ERRORS = 4;
  static final String SA_TOKEN = "vigil-sa-token";
  private static final String SA_USER = "system:serviceaccount:vigil-system:vigil";

  /**
   * The installation's own token (peers) and the reporter "proxy" (token "t", every pool); {@link
   * StandbyRoutingIT}'s too.
   */
  static final Reviewer REVIEWER =
      new Reviewer() {
        @Override
        public Optional<Identity> authenticate(String token) {
          if (SA_TOKEN.equals(token)) {
            return Optional.of(new Identity(SA_USER, "uid-vigil", List.of(), Map.of()));
          }
          return token.startsWith("t")
              ? Optional.of(new Identity("proxy-" + token, "uid-" + token, List.of(), Map.of()))
              : Optional.empty();
        }

        @Override
        public boolean allows(Identity caller, Permission permission) {
          return true;
        }
      };

  @AutoClose private final MockCluster cluster = MockCluster.start();
  private final KubernetesClient client = cluster.client();
  private final HttpClient http = TestTls.client();
  private final List<Replica> replicas = new ArrayList<>();
  private final List<DemoBackend> backends = new ArrayList<>();

  private record Replica(String identity, MockCluster.Replica replica) {
    int port() {
      return replica.running().outcomePort();
    }

    long applied() {
      return replica.running().runtimes().outcomesApplied();
    }

    double forwarded() {
      return counter("vigil_outcomes_forwarded_total");
    }

    double counter(String name) {
      return replica.meters().find(name).counters().stream().mapToDouble(Counter::count).sum();
    }
  }

  /** A reporter's answer: the HTTP status and the accepted and rejected counts it names. */
  record Answer(int status, int accepted, List<String> reasons) {}

  private Replica start(String identity) {
    MockCluster.Replica started =
        cluster.operator(
            cluster.newClient(c -> c.withOauthToken(SA_TOKEN)),
            MockCluster.sharded(
                NS,
                identity,
                "zone-" + identity.substring(identity.length() - 1),
                "--advertise-address=127.0.0.1"),
            o -> o.reviewer(REVIEWER).election(MockCluster.election(identity)));
    Replica r = new Replica(identity, started);
    replicas.add(r);
    return r;
  }

  /**
   * {@link #POOLS} pools of {@link #PER_POOL} backends; {@value #ERRORS} upstream errors in a row
   * eject a backend for 5 minutes (nothing ends an ejection within the test), none refused.
   */
  private void createPools() {
    client.resource(ejectingPolicy()).create();
    for (int p = 0; p < POOLS; p++) {
      backends.addAll(cluster.pods(NS, "web" + p, PER_POOL, 20 + p * PER_POOL));
      client.resource(Fixtures.pool(NS, "web" + p, "fast", "web" + p, cluster.port())).create();
    }
  }

  /**
   * Policy "fast" of {@value #NS}: {@value #ERRORS} upstream errors in a row eject a backend for 5
   * minutes, none refused, no panic; {@link StandbyRoutingIT}'s too.
   */
  static HealthPolicy ejectingPolicy() {
    HealthPolicy policy = Fixtures.policy(NS, "fast", "300ms", "250ms");
    PassiveCheck passive = policy.getSpec().getPassive();
    passive.setConsecutiveErrors(ERRORS);
    passive.setBaseEjectionTime("300s");
    passive.setMaxEjectionTime("600s");
    passive.setMaxEjectionPercent(100);
    policy.getSpec().setPanicThresholdPercent(0);
    return policy;
  }

  /** Three replicas, every pool running on its owner, every replica reachable by the others. */
  private void threeReplicas() {
    createPools();
    join("replica-a", "replica-b", "replica-c");
  }

  /** Starts replicas and waits until every pool runs on its owner and all reach each other. */
  private void join(String... ids) {
    for (String id : ids) {
      start(id);
    }
    await()
        .atMost(Duration.ofSeconds(40))
        .until(() -> cluster.readyIps(NS).size() == POOLS * PER_POOL && settled() && reachable());
  }

  private Map<String, String> owners() {
    return PoolOwners.labels(pools());
  }

  private List<BackendPool> pools() {
    return client.resources(BackendPool.class).inNamespace(NS).list().getItems();
  }

  /** Every pool is labelled, runs on its owner alone, and its status names the owner. */
  private boolean settled() {
    Map<String, String> owners = owners();
    for (BackendPool p : pools()) {
      String owner = owners.get(p.getMetadata().getName());
      if (owner == null || p.getStatus() == null || !owner.equals(p.getStatus().getShard())) {
        return false;
      }
      long running =
          replicas.stream().filter(r -> r.replica().running().runtimes().contains(key(p))).count();
      if (running != 1) {
        return false;
      }
    }
    return true;
  }

  private static dev.vigil.runtime.PoolKey key(BackendPool p) {
    return new dev.vigil.runtime.PoolKey(NS, p.getMetadata().getName());
  }

  /** Each live replica sees every other live one's address on its Lease. */
  private boolean reachable() {
    for (Replica r : replicas) {
      List<Voters.Checker> live = r.replica().running().ring().checkers();
      if (live.size() != replicas.size() || live.stream().anyMatch(c -> c.address().isEmpty())) {
        return false;
      }
    }
    return true;
  }

  private String backend(int pool, int i) {
    return backends.get(pool * PER_POOL + i).host() + ":" + cluster.port();
  }

  /** {@code n} outcomes for one backend, NDJSON (the pool is the URL's). */
  static String outcomes(String backend, boolean ok, int n) {
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < n; i++) {
      b.append("{\"backend\":\"")
          .append(backend)
          .append("\",\"ok\":")
          .append(ok)
          .append(",\"status\":")
          .append(ok ? 200 : 503)
          .append(",\"origin\":\"upstream\",\"latencyMs\":3}\n");
    }
    return b.toString();
  }

  private Answer report(int port, String pool, String body)
      throws IOException, InterruptedException {
    return report(port, pool, body, "t");
  }

  private Answer report(int port, String pool, String body, String token)
      throws IOException, InterruptedException {
    return report(http, port, pool, body, token);
  }

  /** A reporter's batch for pool {@code pool} of {@value #NS} to the replica at {@code port}. */
  static Answer report(HttpClient http, int port, String pool, String body, String token)
      throws IOException, InterruptedException {
    HttpResponse<String> res =
        http.send(
            HttpRequest.newBuilder(
                    URI.create("https://127.0.0.1:" + port + OutcomeIntake.path(NS, pool)))
                .timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/x-ndjson")
                .header("Authorization", "Bearer " + token)
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    JsonObject json = new JsonObject(res.body());
    List<String> reasons = new ArrayList<>();
    if (json.getJsonArray("errors") != null) {
      json.getJsonArray("errors").forEach(e -> reasons.add(((JsonObject) e).getString("reason")));
    } else if (json.getString("error") != null) {
      reasons.add(json.getString("error"));
    }
    return new Answer(res.statusCode(), json.getInteger("accepted", 0), reasons);
  }

  /** What the reporters saw. */
  private static final class Tally {
    final AtomicLong batches = new AtomicLong();
    final AtomicLong firstTry = new AtomicLong();
    final AtomicLong accepted = new AtomicLong();
    final AtomicLong unconfirmed = new AtomicLong();
    final List<String> refusals = new CopyOnWriteArrayList<>();
  }

  /**
   * One reporter (its own token, so its own rate) for one pool: batches of 5 successes, each sent
   * until answered, the first try to the next replica in turn, a retry (no answer, or 503) to the
   * one after it.
   */
  private void reportUntilStopped(
      int pool, List<Replica> alive, AtomicBoolean reporting, Tally tally) {
    String body = outcomes(backend(pool, 2), true, 5);
    int n = pool;
    while (reporting.get()) {
      tally.batches.incrementAndGet();
      for (int attempt = 0; attempt < 20; attempt++) {
        Replica to = alive.get((n + attempt) % alive.size());
        try {
          Answer answer = report(to.port(), "web" + pool, body, "t" + pool);
          tally.accepted.addAndGet(answer.accepted());
          tally.unconfirmed.addAndGet(
              answer.reasons().stream().filter("unconfirmed"::equals).count());
          if (answer.status() == 200 || answer.reasons().contains("unconfirmed")) {
            if (attempt == 0) {
              tally.firstTry.incrementAndGet();
            }
            break;
          }
          tally.refusals.add(answer.status() + " " + answer.reasons());
        } catch (IOException e) {
          tally.refusals.add("no answer from " + to.identity() + ": " + e);
        } catch (InterruptedException e) {
          return;
        }
      }
      n++;
      try {
        // under the intake's per-reporter rate (a 429 is not what this test is about)
        Thread.sleep(20);
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  private long applied() {
    return replicas.stream().mapToLong(Replica::applied).sum();
  }

  private int ejected() {
    return pools().stream()
        .mapToInt(p -> p.getStatus().getEjected() == null ? 0 : p.getStatus().getEjected())
        .sum();
  }

  @Test
  void everyBatchIsAcceptedAtItsFirstRequestWhicheverReplicaTakesIt() throws Exception {
    threeReplicas();
    Replica a = replicas.get(0);
    assertThat(owners().values())
        .as("pools replica-a does not own")
        .anyMatch(o -> !o.equals(a.identity()));
    int requests = 0;
    int batches = 0;
    // round 1: every batch to replica-a; round 2: to each replica in turn. Each batch carries half
    // of the errors that eject one backend, for backends 0 and 1 of every pool.
    for (int round = 0; round < 2; round++) {
      for (int pool = 0; pool < POOLS; pool++) {
        for (int b = 0; b < 2; b++) {
          Replica to = round == 0 ? a : replicas.get(batches % replicas.size());
          Answer answer =
              report(to.port(), "web" + pool, outcomes(backend(pool, b), false, ERRORS / 2));
          requests++;
          batches++;
          assertThat(answer.status())
              .as("batch %d to %s: %s", batches, to.identity(), answer)
              .isEqualTo(200);
          assertThat(answer.accepted()).as("batch %d", batches).isEqualTo(ERRORS / 2);
          assertThat(answer.reasons()).isEmpty();
        }
      }
    }
    System.out.printf("routing: %d batches took %d requests%n", batches, requests);
    assertThat(requests).isEqualTo(batches);
    long sent = (long) batches * (ERRORS / 2);
    // counted where they landed: each outcome applied once by the pool's runtime, and every backend
    // that got ERRORS failures in a row is ejected, no other
    await().atMost(Duration.ofSeconds(10)).until(() -> applied() == sent && ejected() == POOLS * 2);
    assertThat(applied()).isEqualTo(sent);
    assertThat(a.forwarded()).as("outcomes replica-a forwarded to owners").isPositive();
    for (BackendPool p : pools()) {
      Map<String, String> states =
          p.getStatus().getBackends().stream()
              .collect(Collectors.toMap(s -> s.getAddress(), s -> String.valueOf(s.getState())));
      assertThat(states.values().stream().filter(s -> s.equalsIgnoreCase("Ejected")).count())
          .as("%s: %s", p.getMetadata().getName(), states)
          .isEqualTo(2);
    }
  }

  @Test
  void noAcceptedOutcomeIsLostOrAppliedTwiceWhileReplicasJoinLeaveAndAreFenced() throws Exception {
    createPools();
    join("replica-a", "replica-b");
    Replica b = replicas.get(1);
    List<Replica> alive = new CopyOnWriteArrayList<>(replicas);
    AtomicBoolean reporting = new AtomicBoolean(true);
    Tally tally = new Tally();
    List<Thread> reporters = new ArrayList<>();
    for (int pool = 0; pool < POOLS; pool++) {
      int p = pool;
      Thread t = new Thread(() -> reportUntilStopped(p, alive, reporting, tally), "reporter-" + p);
      t.start();
      reporters.add(t);
    }
    Thread.sleep(1_500);
    // replica-c joins: the sharder moves about a third of the pools to it, each a handoff (the old
    // owner seals its runtime, the new one starts once the status names it)
    join("replica-c");
    Replica c = replicas.get(2);
    alive.add(c);
    Thread.sleep(1_500);
    // replica-c leaves: its pools move back to the others at once
    alive.remove(c);
    cluster.stop(c.replica());
    Thread.sleep(2_000);
    // replica-b's Lease taken over by the sharder, as after it died: it stops and its pools move
    Lease lease = client.leases().inNamespace(LEASE_NS).withName("vigil-shard-replica-b").get();
    lease.getSpec().setHolderIdentity("fenced-by-test");
    client.leases().inNamespace(LEASE_NS).resource(lease).update();
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> b.replica().running().runtimes().all().isEmpty());
    Thread.sleep(3_000);
    reporting.set(false);
    for (Thread t : reporters) {
      t.join(60_000);
    }
    AtomicLong accepted = tally.accepted;
    AtomicLong unconfirmed = tally.unconfirmed;

    System.out.printf(
        "routing under moves: %d batches, %d at the first request, %d outcomes accepted, %d"
            + " unconfirmed, %d applied, %.0f tries again inside the replicas; refusals %s%n",
        tally.batches.get(),
        tally.firstTry.get(),
        accepted.get(),
        unconfirmed.get(),
        applied(),
        replicas.stream().mapToDouble(r -> r.counter("vigil_outcome_forward_retries_total")).sum(),
        tally.refusals);
    // applied where they landed: every accepted outcome once; an unconfirmed one at most once
    // (a runtime closing as its pool moves is counted once it closed: wait for the count to settle)
    try {
      await().atMost(Duration.ofSeconds(15)).until(() -> applied() >= accepted.get());
    } catch (org.awaitility.core.ConditionTimeoutException e) {
      // asserted below, with the counts
    }
    assertThat(applied()).isBetween(accepted.get(), accepted.get() + unconfirmed.get());
    assertThat(accepted.get()).isPositive();
  }
}
