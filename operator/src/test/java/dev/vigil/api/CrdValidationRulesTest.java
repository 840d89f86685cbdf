package dev.vigil.api;

import static dev.vigil.api.GeneratedCrds.property;
import static dev.vigil.api.GeneratedCrds.schema;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;
import io.fabric8.kubernetes.api.model.apiextensions.v1.ValidationRule;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Evaluates the generated x-kubernetes-validations rules with CEL-Java (the API server uses CEL-Go
 * with the same standard library and strings extension), so a rule that does not compile or says
 * the wrong thing fails here rather than at {@code kubectl apply}.
 */
class CrdValidationRulesTest {

  private static final JSONSchemaProps HP = schema(GeneratedCrds.healthPolicy());
  private static final JSONSchemaProps BP = schema(GeneratedCrds.backendPool());

  @Test
  void timeoutMustBeShorterThanInterval() throws Exception {
    String rule = rule(HP, "spec.active", ".timeout");
    assertThat(eval(rule, Map.of("interval", "5s", "timeout", "2s"))).isTrue();
    assertThat(eval(rule, Map.of("interval", "1m", "timeout", "59s"))).isTrue();
    assertThat(eval(rule, Map.of("interval", "500ms", "timeout", "1.5s"))).isFalse();
    assertThat(eval(rule, Map.of("interval", "2s", "timeout", "2s"))).isFalse();
  }

  @Test
  void fastAndDownIntervalsMustBeLongerThanTimeoutWhenGiven() throws Exception {
    for (String field : new String[] {"fastInterval", "downInterval"}) {
      String rule = rule(HP, "spec.active", "." + field);
      assertThat(eval(rule, Map.of("interval", "10s", "timeout", "2s"))).isTrue();
      assertThat(eval(rule, Map.of("interval", "10s", "timeout", "2s", field, "2.5s"))).isTrue();
      assertThat(eval(rule, Map.of("interval", "10s", "timeout", "2s", field, "2s"))).isFalse();
      assertThat(eval(rule, Map.of("interval", "10s", "timeout", "2s", field, "500ms"))).isFalse();
      String floor = onlyRule(HP, "spec.active." + field);
      assertThat(eval(floor, "100ms")).isTrue();
      assertThat(eval(floor, "99ms")).isFalse();
    }
  }

  @Test
  void maxIntervalMustBeAtLeastIntervalWhenGiven() throws Exception {
    String rule = rule(HP, "spec.active", ".maxInterval");
    assertThat(eval(rule, Map.of("interval", "5s", "timeout", "2s"))).isTrue();
    assertThat(eval(rule, Map.of("interval", "5s", "timeout", "2s", "maxInterval", "5s"))).isTrue();
    assertThat(eval(rule, Map.of("interval", "5s", "timeout", "2s", "maxInterval", "1m"))).isTrue();
    assertThat(eval(rule, Map.of("interval", "5s", "timeout", "2s", "maxInterval", "4.9s")))
        .isFalse();
    String floor = onlyRule(HP, "spec.active.maxInterval");
    assertThat(eval(floor, "100ms")).isTrue();
    assertThat(eval(floor, "99ms")).isFalse();
  }

  @Test
  void dampingReuseMustBeBelowSuppressAndHalfLifeAtLeastOneSecond() throws Exception {
    String rule = onlyRule(HP, "spec.damping");
    assertThat(eval(rule, Map.of("reuseThreshold", 750L, "suppressThreshold", 3000L))).isTrue();
    assertThat(eval(rule, Map.of("reuseThreshold", 3000L, "suppressThreshold", 3000L))).isFalse();
    assertThat(eval(onlyRule(HP, "spec.damping.halfLife"), "1s")).isTrue();
    assertThat(eval(onlyRule(HP, "spec.damping.halfLife"), "999ms")).isFalse();
    assertThat(eval(onlyRule(HP, "spec.damping.maxSuppressTime"), "0s")).isFalse();
  }

  @Test
  void quorumTimeoutMustBePositive() throws Exception {
    String rule = onlyRule(HP, "spec.quorum.timeout");
    assertThat(eval(rule, "1ms")).isTrue();
    assertThat(eval(rule, "30s")).isTrue();
    assertThat(eval(rule, "0s")).isFalse();
    assertThat(eval(rule, "0ms")).isFalse();
  }

  @Test
  void intervalIsAtLeast100ms() throws Exception {
    String rule = onlyRule(HP, "spec.active.interval");
    assertThat(eval(rule, "100ms")).isTrue();
    assertThat(eval(rule, "1m30s")).isTrue();
    assertThat(eval(rule, "99ms")).isFalse();
    assertThat(eval(rule, "0.05s")).isFalse();
  }

  @Test
  void timeoutAndBaseEjectionTimeArePositiveAndSweepIsAtLeast100ms() throws Exception {
    assertThat(eval(onlyRule(HP, "spec.active.timeout"), "0s")).isFalse();
    assertThat(eval(onlyRule(HP, "spec.active.timeout"), "1ms")).isTrue();
    assertThat(eval(onlyRule(HP, "spec.passive.baseEjectionTime"), "0ms")).isFalse();
    assertThat(eval(onlyRule(HP, "spec.passive.sweepInterval"), "50ms")).isFalse();
    assertThat(eval(onlyRule(HP, "spec.passive.sweepInterval"), "10s")).isTrue();
  }

  @Test
  void maxEjectionTimeIsAtLeastBase() throws Exception {
    String rule = onlyRule(HP, "spec.passive");
    assertThat(eval(rule, Map.of("baseEjectionTime", "30s", "maxEjectionTime", "300s"))).isTrue();
    assertThat(eval(rule, Map.of("baseEjectionTime", "5m", "maxEjectionTime", "300s"))).isTrue();
    assertThat(eval(rule, Map.of("baseEjectionTime", "30s", "maxEjectionTime", "10s"))).isFalse();
  }

  @Test
  void panicExitIsAtLeastThresholdWhenSet() throws Exception {
    String rule = onlyRule(HP, "spec");
    assertThat(eval(rule, Map.of("panicThresholdPercent", 50L))).isTrue();
    assertThat(eval(rule, Map.of("panicThresholdPercent", 50L, "panicExitPercent", 60L))).isTrue();
    assertThat(eval(rule, Map.of("panicThresholdPercent", 50L, "panicExitPercent", 50L))).isTrue();
    assertThat(eval(rule, Map.of("panicThresholdPercent", 50L, "panicExitPercent", 40L))).isFalse();
  }

  @Test
  void statusRangesRunLowToHigh() throws Exception {
    String rule = onlyRule(HP, "spec.active.http.expectedStatuses");
    assertThat(eval(rule, List.of("200-399", "204"))).isTrue();
    assertThat(eval(rule, List.of("200-200"))).isTrue();
    assertThat(eval(rule, List.of("200", "399-200"))).isFalse();
  }

  @Test
  void failFastStatusesAreDisjointFromExpectedStatuses() throws Exception {
    String rule = rule(HP, "spec.active.http", ".failFastStatuses");
    Map<String, Object> ok =
        Map.of(
            "expectedStatuses", List.of("200-399"), "failFastStatuses", List.of("500-599", "429"));
    assertThat(eval(rule, ok)).isTrue();
    assertThat(eval(rule, Map.of("expectedStatuses", List.of("200-399")))).isTrue();
    assertThat(
            eval(
                rule,
                Map.of("expectedStatuses", List.of("200-399"), "failFastStatuses", List.of("399"))))
        .isFalse();
    assertThat(
            eval(
                rule,
                Map.of(
                    "expectedStatuses",
                    List.of("200", "503"),
                    "failFastStatuses",
                    List.of("500-599"))))
        .isFalse();
    assertThat(
            eval(
                rule,
                Map.of(
                    "expectedStatuses",
                    List.of("200-299"),
                    "failFastStatuses",
                    List.of("100-199", "300-599"))))
        .isTrue();
    String ranges = onlyRule(HP, "spec.active.http.failFastStatuses");
    assertThat(eval(ranges, List.of("599-500"))).isFalse();
  }

  @Test
  void aRequestBodyNeedsAMethodThatCarriesOne() throws Exception {
    String rule = rule(HP, "spec.active.http", ".body");
    assertThat(eval(rule, Map.of("method", "POST", "body", "{}"))).isTrue();
    assertThat(eval(rule, Map.of("method", "GET"))).isTrue();
    assertThat(eval(rule, Map.of("method", "GET", "body", "{}"))).isFalse();
    assertThat(eval(rule, Map.of("method", "HEAD", "body", "{}"))).isFalse();
  }

  @Test
  void headerMatchNamesAreUniqueWithoutRegardToCase() throws Exception {
    String rule = onlyRule(HP, "spec.active.http.headerMatch");
    assertThat(eval(rule, List.of(Map.of("name", "X-Ready"), Map.of("name", "X-Role")))).isTrue();
    assertThat(eval(rule, List.of(Map.of("name", "X-Ready"), Map.of("name", "x-ready")))).isFalse();
  }

  @Test
  void httpVersionTwoNeedsProtocolHttpOrHttps() throws Exception {
    String rule = rule(HP, "spec.active", ".http.version");
    assertThat(eval(rule, Map.of("protocol", "HTTPS", "http", Map.of("version", "2")))).isTrue();
    assertThat(eval(rule, Map.of("protocol", "GRPC", "http", Map.of("version", "1.1")))).isTrue();
    assertThat(eval(rule, Map.of("protocol", "GRPC"))).isTrue();
    assertThat(eval(rule, Map.of("protocol", "TCP", "http", Map.of("version", "2")))).isFalse();
  }

  @Test
  void grpcWatchNeedsProtocolGrpc() throws Exception {
    String rule = rule(HP, "spec.active", ".grpc.watch");
    assertThat(eval(rule, Map.of("protocol", "GRPC", "grpc", Map.of("watch", true)))).isTrue();
    assertThat(eval(rule, Map.of("protocol", "HTTP", "grpc", Map.of("watch", false)))).isTrue();
    assertThat(eval(rule, Map.of("protocol", "HTTP", "grpc", Map.of("service", "x")))).isTrue();
    assertThat(eval(rule, Map.of("protocol", "HTTP", "grpc", Map.of("watch", true)))).isFalse();
  }

  @Test
  void theWebsocketBlockNeedsProtocolWebSocket() throws Exception {
    String rule = rule(HP, "spec.active", ".websocket");
    assertThat(eval(rule, Map.of("protocol", "WebSocket", "websocket", Map.of("path", "/ws"))))
        .isTrue();
    assertThat(eval(rule, Map.of("protocol", "HTTP"))).isTrue();
    assertThat(eval(rule, Map.of("protocol", "HTTP", "websocket", Map.of("path", "/ws"))))
        .isFalse();
  }

  @Test
  void failureWindowIsAtLeastOneMillisecond() throws Exception {
    String rule = onlyRule(HP, "spec.passive.failureWindow");
    assertThat(eval(rule, "1ms")).isTrue();
    assertThat(eval(rule, "10s")).isTrue();
    assertThat(eval(rule, "0s")).isFalse();
  }

  @Test
  void portsAreNumbersInRangeOrServiceNames() throws Exception {
    for (String path : List.of("spec.active.port")) {
      String rule = onlyRule(HP, path);
      assertThat(eval(rule, 8080L)).isTrue();
      assertThat(eval(rule, 65535L)).isTrue();
      assertThat(eval(rule, 0L)).isFalse();
      assertThat(eval(rule, 65536L)).isFalse();
      assertThat(eval(rule, "http")).isTrue();
      assertThat(eval(rule, "grpc-health")).isTrue();
      assertThat(eval(rule, "HTTP")).isFalse();
      assertThat(eval(rule, "8080")).isFalse();
      assertThat(eval(rule, "a--b")).isFalse();
      assertThat(eval(rule, "sixteen-chars-xx")).isFalse();
    }
    // In a list only the length of a name is checked (CEL cost budget); numbers as above.
    String targetPort = onlyRule(BP, "spec.ports.[].targetPort");
    assertThat(eval(targetPort, 8080L)).isTrue();
    assertThat(eval(targetPort, 0L)).isFalse();
    assertThat(eval(targetPort, 65536L)).isFalse();
    assertThat(eval(targetPort, "http")).isTrue();
    assertThat(eval(targetPort, "")).isFalse();
    assertThat(eval(targetPort, "sixteen-chars-xx")).isFalse();
  }

  @Test
  void severalPortsNeedUniqueNames() throws Exception {
    String rule = onlyRule(BP, "spec.ports");
    assertThat(eval(rule, List.of(Map.of("port", 80L)))).isTrue();
    assertThat(
            eval(
                rule,
                List.of(
                    Map.of("name", "http", "port", 80L), Map.of("name", "https", "port", 443L))))
        .isTrue();
    assertThat(
            eval(
                rule,
                List.of(Map.of("name", "http", "port", 80L), Map.of("name", "http", "port", 81L))))
        .isFalse();
    assertThat(eval(rule, List.of(Map.of("name", "http", "port", 80L), Map.of("port", 81L))))
        .isFalse();
  }

  /**
   * A duration that is no duration ({@code -2s}, {@code 2 seconds}) gets the schema's pattern error
   * and nothing else: no rule of the field or of the object around it fails or errors, so {@code
   * kubectl apply} names only the real problem (not "timeout must be shorter than interval", not a
   * CEL conversion error).
   */
  @Test
  void aMalformedDurationGetsOnlyThePatternError() throws Exception {
    String[][] cases = {
      {"spec.active", "interval"},
      {"spec.active", "timeout"},
      {"spec.active", "fastInterval"},
      {"spec.active", "downInterval"},
      {"spec.active", "maxInterval"},
      {"spec.passive", "baseEjectionTime"},
      {"spec.passive", "maxEjectionTime"},
      {"spec.passive", "sweepInterval"},
      {"spec.passive", "failureWindow"},
      {"spec.damping", "halfLife"},
      {"spec.damping", "maxSuppressTime"},
      {"spec.quorum", "timeout"}
    };
    for (String[] c : cases) {
      String field = c[0] + "." + c[1];
      String pattern = property(HP, field).getPattern();
      for (String bad : List.of("-2s", "2 seconds")) {
        assertThat(bad.matches(pattern)).as("%s: %s matches the pattern", field, bad).isFalse();
        java.util.Map<String, Object> object =
            new java.util.HashMap<>(
                Map.of(
                    "interval", "5s",
                    "timeout", "2s",
                    "fastInterval", "3s",
                    "downInterval", "10s",
                    "baseEjectionTime", "30s",
                    "maxEjectionTime", "300s",
                    "halfLife", "60s",
                    "maxSuppressTime", "300s",
                    "reuseThreshold", 750L,
                    "suppressThreshold", 3000L));
        object.put(c[1], bad);
        List<ValidationRule> around = property(HP, c[0]).getXKubernetesValidations();
        for (ValidationRule r : around == null ? List.<ValidationRule>of() : around) {
          assertThat(eval(r.getRule(), object))
              .as("%s = %s: rule %s of %s", field, bad, r.getRule(), c[0])
              .isTrue();
        }
        for (ValidationRule r : property(HP, field).getXKubernetesValidations()) {
          assertThat(eval(r.getRule(), bad))
              .as("%s = %s: rule %s", field, bad, r.getRule())
              .isTrue();
        }
      }
    }
  }

  /** The rule of the object at {@code path} that reports on {@code fieldPath}. */
  private static String rule(JSONSchemaProps root, String path, String fieldPath) {
    List<ValidationRule> rules = property(root, path).getXKubernetesValidations();
    List<ValidationRule> matching =
        rules.stream().filter(r -> fieldPath.equals(r.getFieldPath())).toList();
    assertThat(matching).as("rules of %s on %s", path, fieldPath).hasSize(1);
    return matching.get(0).getRule();
  }

  private static String onlyRule(JSONSchemaProps root, String path) {
    List<ValidationRule> rules = property(root, path).getXKubernetesValidations();
    assertThat(rules).as("x-kubernetes-validations of %s", path).hasSize(1);
    return rules.get(0).getRule();
  }

  private boolean eval(String rule, Object self) throws Exception {
    return (Boolean) CrdSchema.evaluate(rule, self);
  }
}
