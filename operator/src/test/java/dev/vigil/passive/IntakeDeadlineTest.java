package dev.vigil.passive;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.vigil.health.HealthSettings;
import dev.vigil.runtime.PoolKey;
import dev.vigil.testing.TestTls;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.grpc.common.GrpcStatus;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The request's deadline after a batch was handed to its route (docs/passive.md, "Processing and
 * replies"): the route may still apply it, so a batch without a key is answered {@code unconfirmed}
 * (not to be sent again) instead of 503, which a reporter retries and which would count it twice; a
 * keyed batch is answered 503 and its retry comes from the owner's memory. The slow apply is a pool
 * whose runtime has no members yet (a new owner starting): the route tries it again until they
 * come, past the request's 700 ms.
 */
class IntakeDeadlineTest {
  private static final PoolKey WEB = new PoolKey("shop", "web");
  private static final String TOKEN = "reporter-token";
  private static final HttpClient HTTP = TestTls.client();

  private Vertx vertx;
  private IntakeHarness harness;

  @BeforeEach
  void setUp() {
    vertx = Vertx.vertx();
    harness =
        new IntakeHarness(
            vertx,
            new SimpleMeterRegistry(),
            IntakeLimits.defaults().withRequestTimeoutMs(700),
            System::currentTimeMillis,
            RouteLimits.local().withDeadlineMs(5_000)); // as between replicas
    harness.reviewer.user(TOKEN, "system:serviceaccount:shop:reporter", "shop");
    harness.runtimes.ensure(WEB, HealthSettings.defaults()); // starting: no members yet
  }

  @AfterEach
  void tearDown() {
    harness.close();
    IntakeHarness.await(vertx.close());
  }

  @Test
  void aBatchWithoutAKeyHandedOnBeforeTheDeadlineIsAnsweredUnconfirmedAndAppliedOnce()
      throws Exception {
    HttpResponse<String> answer = post(null);
    assertThat(answer.statusCode()).as(answer.body()).isEqualTo(422);
    JsonObject body = new JsonObject(answer.body());
    assertThat(body.getInteger("accepted")).isZero();
    assertThat(reasons(body)).containsExactly("unconfirmed", "unconfirmed", "unconfirmed");

    harness.pool(WEB, 3, HealthSettings.defaults()); // the members come: the route applies it
    await().atMost(Duration.ofSeconds(10)).until(() -> harness.runtimes.outcomesApplied() == 3);
  }

  @Test
  void aKeyedBatchIsAnswered503AndItsRetryIsAppliedOnce() throws Exception {
    HttpResponse<String> first = post("\"b-1\"");
    assertThat(first.statusCode()).as(first.body()).isEqualTo(503);

    harness.pool(WEB, 3, HealthSettings.defaults());
    HttpResponse<String> again = post("\"b-1\"");
    assertThat(again.statusCode()).as(again.body()).isEqualTo(200);
    assertThat(new JsonObject(again.body()).getInteger("accepted")).isEqualTo(3);
    assertThat(harness.runtimes.outcomesApplied()).isEqualTo(3);
  }

  @Test
  void anOtlpExportHandedOnBeforeTheDeadlineIsAPartialSuccessNotARefusal() {
    BackendAddresses addresses = new BackendAddresses();
    addresses.replace(WEB, OtlpReceiverTest.members(IntakeHarness.ip(0)));
    harness.intake.receiveOtlp(addresses, List.of(OtlpProfile.TRAEFIK));
    try (OtlpClients clients = new OtlpClients(vertx, harness.port)) {
      var answer =
          clients.grpc(
              TOKEN,
              null,
              OtlpClients.traefikExport(
                  OtlpReceiverTest.failures(IntakeHarness.ip(0) + ":8080", 3)));
      // refused (UNAVAILABLE), the exporter would send it again and it would count twice
      assertThat(answer.status()).as(answer.message()).isEqualTo(GrpcStatus.OK);
      assertThat(answer.response().getPartialSuccess().getRejectedLogRecords()).isEqualTo(3);
      assertThat(answer.response().getPartialSuccess().getErrorMessage()).contains("unconfirmed=3");

      harness.pool(WEB, 3, HealthSettings.defaults());
      await().atMost(Duration.ofSeconds(10)).until(() -> harness.runtimes.outcomesApplied() == 3);
    }
  }

  /** Three failures of backend 0, under {@code key} (null: none). */
  private HttpResponse<String> post(String key) throws Exception {
    String failure = "{\"backend\":\"" + IntakeHarness.ip(0) + ":8080\",\"status\":503}";
    return harness.post(
        HTTP,
        OutcomeIntake.path("shop", "web"),
        TOKEN,
        "[" + String.join(",", failure, failure, failure) + "]",
        key);
  }

  private static List<String> reasons(JsonObject body) {
    List<String> out = new ArrayList<>();
    JsonArray errors = body.getJsonArray("errors");
    for (int i = 0; i < errors.size(); i++) {
      out.add(errors.getJsonObject(i).getString("reason"));
    }
    return out;
  }
}
