package dev.vigil.passive;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigil.health.HealthSettings;
import dev.vigil.runtime.PoolKey;
import dev.vigil.testing.TestTls;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A reporter's {@code Idempotency-Key} (docs/passive.md, "Sending a batch again"): the header's
 * forms, its scope, and on one replica's intake (the unsharded route) a batch sent again under the
 * same key applied once, another body under it refused, a malformed key refused naming the header.
 */
class IdempotencyKeyTest {
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
            vertx, new SimpleMeterRegistry(), IntakeLimits.defaults(), System::currentTimeMillis);
    harness.pool(WEB, 3, HealthSettings.defaults());
    harness.reviewer.user(TOKEN, "system:serviceaccount:shop:reporter", "shop");
  }

  @AfterEach
  void tearDown() {
    harness.close();
    IntakeHarness.await(vertx.close());
  }

  @Test
  void takesTheDraftsQuotedStringAndABareToken() {
    assertThat(IdempotencyKey.parse("\"8e03978e-40d5-43e8-bc93-6894a57f9324\""))
        .isEqualTo("8e03978e-40d5-43e8-bc93-6894a57f9324");
    assertThat(IdempotencyKey.parse("batch-17")).isEqualTo("batch-17");
    assertThat(IdempotencyKey.parse("\"a \\\"b\\\" c\"")).isEqualTo("a \"b\" c");
    assertThat(IdempotencyKey.parse(null)).isNull();
  }

  @Test
  void refusesWhatIsNoKeyNamingTheHeader() {
    for (String bad : new String[] {"\"\"", "\"open", "two words", "\"é\"", "x".repeat(256)}) {
      assertThatThrownBy(() -> IdempotencyKey.parse(bad))
          .as(bad)
          .isInstanceOf(IdempotencyKey.Invalid.class)
          .hasMessageStartingWith("Idempotency-Key");
    }
  }

  @Test
  void isScopedToTheCallerAndThePool() {
    byte[] body = "[]".getBytes(StandardCharsets.UTF_8);
    IdempotencyKey k = IdempotencyKey.of("k", "alice", WEB, body);
    assertThat(IdempotencyKey.of("k", "alice", WEB, body)).isEqualTo(k);
    assertThat(IdempotencyKey.of("k", "bob", WEB, body).slot()).isNotEqualTo(k.slot());
    assertThat(IdempotencyKey.of("k", "alice", new PoolKey("shop", "api"), body).slot())
        .isNotEqualTo(k.slot());
    assertThat(IdempotencyKey.of("k", "alice", WEB, "[ ]".getBytes(StandardCharsets.UTF_8)))
        .satisfies(
            other -> {
              assertThat(other.slot()).isEqualTo(k.slot());
              assertThat(other.fingerprint()).isNotEqualTo(k.fingerprint());
            });
  }

  private HttpResponse<String> post(String body, String key) throws Exception {
    HttpRequest.Builder req =
        HttpRequest.newBuilder(
                URI.create("https://127.0.0.1:" + harness.port + OutcomeIntake.path("shop", "web")))
            .header("Content-Type", "application/x-ndjson")
            .header("Authorization", "Bearer " + TOKEN)
            .POST(HttpRequest.BodyPublishers.ofString(body));
    if (key != null) {
      req.header(IdempotencyKey.HEADER, key);
    }
    return HTTP.send(req.build(), HttpResponse.BodyHandlers.ofString());
  }

  private static String failures(int n) {
    return ("{\"backend\":\"" + IntakeHarness.ip(0) + ":8080\",\"status\":503}\n").repeat(n);
  }

  @Test
  void aBatchSentAgainUnderItsKeyIsAnsweredAsBeforeAndAppliedOnce() throws Exception {
    HttpResponse<String> first = post(failures(2), "\"b-1\"");
    HttpResponse<String> again = post(failures(2), "\"b-1\"");
    assertThat(first.statusCode()).as(first.body()).isEqualTo(200);
    assertThat(again.statusCode()).as(again.body()).isEqualTo(200);
    assertThat(new JsonObject(again.body()).getInteger("accepted")).isEqualTo(2);
    assertThat(harness.runtimes.outcomesApplied()).isEqualTo(2);

    post(failures(2), "\"b-2\"");
    post(failures(2), null);
    assertThat(harness.runtimes.outcomesApplied()).as("new keys, and no key, apply").isEqualTo(6);
  }

  @Test
  void aKeySentAgainWithAnotherBodyIsRefusedAndAppliesNothing() throws Exception {
    post(failures(2), "b-1");
    HttpResponse<String> other = post(failures(3), "b-1");
    assertThat(other.statusCode()).isEqualTo(422);
    assertThat(new JsonObject(other.body()).getString("error")).isEqualTo("idempotency_key_reused");
    assertThat(other.body()).contains("Idempotency-Key");
    assertThat(harness.runtimes.outcomesApplied()).isEqualTo(2);
  }

  @Test
  void aMalformedKeyIsRefusedBeforeTheBodyIsReadNamingTheHeader() throws Exception {
    HttpResponse<String> res = post(failures(1), "\"unterminated");
    assertThat(res.statusCode()).isEqualTo(400);
    assertThat(new JsonObject(res.body()).getString("error")).isEqualTo("invalid_idempotency_key");
    assertThat(res.body()).contains("Idempotency-Key");
    assertThat(harness.runtimes.outcomesApplied()).isZero();
  }
}
