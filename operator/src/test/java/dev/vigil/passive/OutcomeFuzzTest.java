package dev.vigil.passive;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.health.BackendView;
import dev.vigil.health.HealthSettings;
import dev.vigil.runtime.PoolKey;
import dev.vigil.runtime.PoolRuntime;
import dev.vigil.testing.TestTls;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Vertx;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * A seeded mutation fuzzer over the outcome format: valid batches for backends the pool does not
 * have, cut short, with bytes flipped, numbers made huge, values nested deep, tokens spliced in.
 * Whatever comes out, the parser answers a batch or a 4xx (never another exception), and over HTTP
 * every input is answered with a 4xx and leaves the pool's state as it was. The seed is fixed: a
 * failure names the input, and the run repeats exactly.
 */
class OutcomeFuzzTest {
  private static final long SEED = 0x5EC0_12L;
  private static final String NOBODY = "192.168.77.77:8080";
  private static final List<String> CORPUS =
      List.of(
          "[{\"backend\":\"" + NOBODY + "\",\"status\":503,\"latencyMs\":12.5}]",
          "[{\"namespace\":\"shop\",\"pool\":\"web\",\"backend\":\""
              + NOBODY
              + "\",\"ok\":false,"
              + "\"origin\":\"upstream\",\"at\":1000000}]",
          "[{\"backend\":\"[fd00::77]:8080\",\"status\":0},{\"backend\":\""
              + NOBODY
              + "\",\"ok\":true,\"status\":200,\"latencyMs\":1}]");
  private static final String[] SPLICES = {
    "99999999999999999999999999999",
    "1e999999",
    "-1e-999999",
    "NaN",
    "\"\\u0000\"",
    "null",
    "{}",
    "[]",
    ",",
    "\"",
    "\\",
    "\uD800",
    "{\"namespace\":\"shop\"}",
    "\"backend\":\"10.0.0.1:8080\"",
  };

  /** One mutated input; the same seed gives the same sequence. */
  static byte[] mutate(Random random, byte[] seed) {
    byte[] b = seed.clone();
    int kind = random.nextInt(6);
    switch (kind) {
      case 0 -> { // cut short
        return java.util.Arrays.copyOf(b, random.nextInt(b.length));
      }
      case 1 -> { // flip a few bits
        int flips = 1 + random.nextInt(4);
        for (int i = 0; i < flips; i++) {
          b[random.nextInt(b.length)] ^= (byte) (1 << random.nextInt(8));
        }
        return b;
      }
      case 2 -> { // a huge number in place of the first number
        String s = new String(b, StandardCharsets.UTF_8);
        String huge =
            random.nextBoolean()
                ? "9".repeat(1 + random.nextInt(5_000))
                : "1e" + random.nextInt(Integer.MAX_VALUE);
        return s.replaceFirst("\\d+(\\.\\d+)?", huge).getBytes(StandardCharsets.UTF_8);
      }
      case 3 -> { // a value nested deep
        String s = new String(b, StandardCharsets.UTF_8);
        int depth = 1 + random.nextInt(20_000);
        String open = random.nextBoolean() ? "[" : "{\"a\":";
        String close = open.equals("[") ? "]" : "}";
        return s.replaceFirst(
                "\"ok\":|\"status\":|\"backend\":",
                "$0" + open.repeat(depth) + "1" + close.repeat(random.nextInt(depth + 1)))
            .getBytes(StandardCharsets.UTF_8);
      }
      case 4 -> { // splice a token somewhere
        String s = new String(b, StandardCharsets.UTF_8);
        int at = random.nextInt(s.length() + 1);
        return (s.substring(0, at) + SPLICES[random.nextInt(SPLICES.length)] + s.substring(at))
            .getBytes(StandardCharsets.UTF_8);
      }
      default -> { // random bytes over a stretch
        int from = random.nextInt(b.length);
        int to = Math.min(b.length, from + 1 + random.nextInt(8));
        for (int i = from; i < to; i++) {
          b[i] = (byte) random.nextInt(256);
        }
        return b;
      }
    }
  }

  @Test
  void theParserAnswersEveryMutationWithABatchOrA4xx() {
    OutcomeParser parser = new OutcomeParser(IntakeLimits.defaults(), () -> 1_000_000L);
    PoolKey web = new PoolKey("shop", "web");
    Random random = new Random(SEED);
    int refused = 0;
    for (int i = 0; i < 20_000; i++) {
      byte[] input = mutate(random, CORPUS.get(i % CORPUS.size()).getBytes(StandardCharsets.UTF_8));
      OutcomeParser.Format format =
          random.nextBoolean() ? OutcomeParser.Format.JSON_ARRAY : OutcomeParser.Format.NDJSON;
      try {
        OutcomeParser.Parsed parsed = parser.parse(input, input.length, format, web);
        assertThat(parsed.outcomes())
            .as("input %d: %s", i, shown(input))
            .allSatisfy(o -> assertThat(o.pool()).isEqualTo(web));
      } catch (BadBatch e) {
        refused++;
        assertThat(e.status()).as("input %d: %s", i, shown(input)).isBetween(400, 499);
      } catch (RuntimeException e) {
        throw new AssertionError("input " + i + " threw " + e + ": " + shown(input), e);
      }
    }
    assertThat(refused).as("the mutations reach the refusals").isGreaterThan(1_000);
  }

  @Test
  void overHttpEveryMutationIsA4xxAndChangesNothing() throws Exception {
    Vertx vertx = Vertx.vertx();
    IntakeLimits limits =
        IntakeLimits.defaults().withMaxBodyBytes(256 * 1024).withRate(1_000_000, 1_000_000);
    try (IntakeHarness harness =
        new IntakeHarness(vertx, new SimpleMeterRegistry(), limits, () -> 1_000_000L)) {
      harness.reviewer.user("t", "system:serviceaccount:shop:envoy", "shop");
      PoolRuntime web = harness.pool(new PoolKey("shop", "web"), 3, HealthSettings.defaults());
      List<BackendView> before = IntakeHarness.state(web);
      HttpClient http = TestTls.client();
      Random random = new Random(SEED + 1);
      List<Integer> statuses = new ArrayList<>();
      for (int i = 0; i < 300; i++) {
        byte[] input =
            mutate(random, CORPUS.get(i % CORPUS.size()).getBytes(StandardCharsets.UTF_8));
        HttpResponse<String> r =
            http.send(
                HttpRequest.newBuilder(
                        URI.create(
                            "https://127.0.0.1:"
                                + harness.port
                                + OutcomeIntake.path("shop", "web")))
                    .timeout(Duration.ofSeconds(10))
                    .header("Authorization", "Bearer t")
                    .header(
                        "Content-Type",
                        random.nextBoolean() ? "application/json" : "application/x-ndjson")
                    .POST(HttpRequest.BodyPublishers.ofByteArray(input))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode())
            .as("input %d: %s -> %s", i, shown(input), r.body())
            .isBetween(400, 499);
        statuses.add(r.statusCode());
      }
      assertThat(IntakeHarness.state(web)).isEqualTo(before);
      assertThat(statuses).contains(400, 422);
      assertThat(harness.reviewer.onEventLoop).hasValue(0);
    } finally {
      IntakeHarness.await(vertx.close());
    }
  }

  private static String shown(byte[] input) {
    String s = new String(input, StandardCharsets.UTF_8);
    return s.length() > 300 ? s.substring(0, 300) + "...(" + s.length() + " chars)" : s;
  }
}
