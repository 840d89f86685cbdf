package dev.vigil.api;

import static dev.vigil.api.GeneratedCrds.property;
import static dev.vigil.api.GeneratedCrds.schema;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceColumnDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionVersion;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;
import io.fabric8.kubernetes.api.model.apiextensions.v1.ValidationRule;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The generated CRDs carry what docs/design.md §1 promises: names, columns, descriptions,
 * validation.
 */
class CrdContentTest {

  private static final String DURATION = "^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$";

  /** Fabric8 model types whose schema Vigil does not write (and which carry no descriptions). */
  private static final Set<String> FOREIGN = Set.of("conditions", "selector");

  private static final CustomResourceDefinition healthPolicy = GeneratedCrds.healthPolicy();
  private static final CustomResourceDefinition backendPool = GeneratedCrds.backendPool();
  private static final JSONSchemaProps hp = schema(healthPolicy);
  private static final JSONSchemaProps bp = schema(backendPool);

  @Test
  void bothKindsAreNamespacedInGroupVigilWithShortNamesAndCategory() {
    assertThat(healthPolicy.getMetadata().getName()).isEqualTo("healthpolicies.vigil.dev");
    assertThat(healthPolicy.getSpec().getGroup()).isEqualTo("vigil.dev");
    assertThat(healthPolicy.getSpec().getScope()).isEqualTo("Namespaced");
    assertThat(healthPolicy.getSpec().getNames().getKind()).isEqualTo("HealthPolicy");
    assertThat(healthPolicy.getSpec().getNames().getPlural()).isEqualTo("healthpolicies");
    assertThat(healthPolicy.getSpec().getNames().getSingular()).isEqualTo("healthpolicy");
    assertThat(healthPolicy.getSpec().getNames().getShortNames()).containsExactly("hp");
    assertThat(healthPolicy.getSpec().getNames().getCategories()).containsExactly("vigil");

    assertThat(backendPool.getMetadata().getName()).isEqualTo("backendpools.vigil.dev");
    assertThat(backendPool.getSpec().getGroup()).isEqualTo("vigil.dev");
    assertThat(backendPool.getSpec().getScope()).isEqualTo("Namespaced");
    assertThat(backendPool.getSpec().getNames().getKind()).isEqualTo("BackendPool");
    assertThat(backendPool.getSpec().getNames().getPlural()).isEqualTo("backendpools");
    assertThat(backendPool.getSpec().getNames().getShortNames()).containsExactly("bp");
    assertThat(backendPool.getSpec().getNames().getCategories()).containsExactly("vigil");
  }

  @Test
  void servesOneStoredVersionV1alpha1WithStatusSubresource() {
    for (CustomResourceDefinition crd : List.of(healthPolicy, backendPool)) {
      assertThat(crd.getSpec().getVersions()).hasSize(1);
      CustomResourceDefinitionVersion version = crd.getSpec().getVersions().get(0);
      assertThat(version.getName()).isEqualTo("v1alpha1");
      assertThat(version.getServed()).isTrue();
      assertThat(version.getStorage()).isTrue();
      assertThat(version.getSubresources().getStatus()).isNotNull();
    }
  }

  @Test
  void healthPolicyColumnsAreThoseOfDesignInOrder() {
    List<CustomResourceColumnDefinition> columns = columns(healthPolicy);
    assertThat(columns)
        .extracting(column -> column.getName().toUpperCase())
        .containsExactly(
            "PROTOCOL", "INTERVAL", "RISE", "FALL", "POOLS", "AVAILABLE", "ACCEPTED", "AGE");
    assertThat(columns)
        .extracting(CustomResourceColumnDefinition::getJsonPath)
        .containsExactly(
            ".spec.active.protocol",
            ".spec.active.interval",
            ".spec.active.rise",
            ".spec.active.fall",
            ".status.pools",
            ".status.availability",
            ".status.conditions[?(@.type==\"Accepted\")].status",
            ".metadata.creationTimestamp");
    assertThat(columns)
        .extracting(CustomResourceColumnDefinition::getType)
        .containsExactly(
            "string", "string", "integer", "integer", "integer", "string", "string", "date");
    assertThat(columns).allSatisfy(column -> assertThat(column.getPriority()).isZero());
  }

  @Test
  void backendPoolColumnsAreThoseOfDesignInOrder() {
    List<CustomResourceColumnDefinition> columns = columns(backendPool);
    assertThat(columns)
        .extracting(column -> column.getName().toUpperCase())
        .containsExactly(
            "POLICY", "AVAILABLE", "TOTAL", "EJECTED", "PANIC", "REASON", "SHARD", "AGE");
    assertThat(columns)
        .extracting(CustomResourceColumnDefinition::getJsonPath)
        .containsExactly(
            ".spec.policyRef.name",
            ".status.availability",
            ".status.total",
            ".status.ejected",
            ".status.panic",
            // the Ready condition's reason: PolicyNotFound for a pool without its policy
            ".status.conditions[?(@.type==\"Ready\")].reason",
            ".status.shard",
            ".metadata.creationTimestamp");
    // the owner shows with kubectl get bp -o wide only
    assertThat(columns)
        .filteredOn(c -> c.getPriority() != null && c.getPriority() > 0)
        .extracting(CustomResourceColumnDefinition::getName)
        .containsExactly("Shard");
  }

  @Test
  void everyPropertyHasADescriptionForKubectlExplain() {
    assertThat(hp.getDescription()).isNotBlank();
    assertThat(bp.getDescription()).isNotBlank();
    List<String> missing = new ArrayList<>();
    collectMissingDescriptions("healthpolicy", hp, missing);
    collectMissingDescriptions("backendpool", bp, missing);
    assertThat(missing).isEmpty();
  }

  @Test
  void activeCheckDefaultsAndRanges() {
    assertDefault(hp, "spec.active.protocol", "\"HTTP\"");
    assertThat(property(hp, "spec.active.protocol").getEnum())
        .extracting(JsonNode::asText)
        .containsExactlyInAnyOrder("HTTP", "HTTPS", "TCP", "GRPC", "WebSocket");
    assertDefault(hp, "spec.active.interval", "\"5s\"");
    assertDefault(hp, "spec.active.timeout", "\"2s\"");
    assertDefault(hp, "spec.active.jitterPercent", "10");
    assertDefault(hp, "spec.active.rise", "2");
    assertDefault(hp, "spec.active.fall", "3");
    assertDefault(hp, "spec.active.reuseConnection", "false");
    assertDefault(hp, "spec.active.http.method", "\"GET\"");
    assertDefault(hp, "spec.active.http.path", "\"/healthz\"");
    assertDefault(hp, "spec.active.http.expectedStatuses", "[\"200-399\"]");
    assertDefault(hp, "spec.active.grpc.service", "\"\"");
    assertDefault(hp, "spec.active.tls.insecureSkipVerify", "false");
    assertRange(hp, "spec.active.jitterPercent", 0, 50);
    assertRange(hp, "spec.active.rise", 1, 100);
    assertRange(hp, "spec.active.fall", 1, 100);
    assertThat(property(hp, "spec.active.interval").getPattern()).isEqualTo(DURATION);
    assertThat(property(hp, "spec.active.timeout").getPattern()).isEqualTo(DURATION);
    assertThat(property(hp, "spec.active.http.expectedStatuses.[]").getPattern())
        .isEqualTo("^[1-5][0-9]{2}(-[1-5][0-9]{2})?$");
    assertThat(property(hp, "spec.active.port").getXKubernetesIntOrString()).isTrue();
  }

  @Test
  void passiveCheckDefaultsAndRanges() {
    assertDefault(hp, "spec.passive.enforce", "true");
    assertDefault(hp, "spec.passive.consecutiveErrors", "5");
    assertDefault(hp, "spec.passive.consecutiveLocalOriginErrors", "5");
    assertDefault(hp, "spec.passive.splitLocalOrigin", "true");
    assertDefault(hp, "spec.passive.baseEjectionTime", "\"30s\"");
    assertDefault(hp, "spec.passive.maxEjectionTime", "\"300s\"");
    assertDefault(hp, "spec.passive.maxEjectionPercent", "10");
    assertDefault(hp, "spec.passive.alwaysEjectOne", "false");
    assertDefault(hp, "spec.passive.sweepInterval", "\"10s\"");
    assertDefault(hp, "spec.passive.unejectOnActivePass", "false");
    assertDefault(hp, "spec.panicThresholdPercent", "50");
    assertThat(property(hp, "spec.panicExitPercent").getDefault()).isNull();
    assertRange(hp, "spec.passive.consecutiveErrors", 0, 1000);
    assertRange(hp, "spec.passive.consecutiveLocalOriginErrors", 0, 1000);
    assertRange(hp, "spec.passive.maxEjectionPercent", 0, 100);
    assertRange(hp, "spec.panicThresholdPercent", 0, 100);
    assertRange(hp, "spec.panicExitPercent", 0, 100);
    for (String rule : List.of("successRate", "failurePercentage", "latency")) {
      JSONSchemaProps block = property(hp, "spec.passive." + rule);
      assertThat(block.getDefault()).as("%s is off unless present", rule).isNull();
      assertDefault(hp, "spec.passive." + rule + ".enforce", "true");
    }
    assertThat(property(hp, "spec.passive.successRate").getProperties())
        .containsOnlyKeys("minimumHosts", "requestVolume", "stdevFactor", "enforce");
    assertThat(property(hp, "spec.passive.failurePercentage").getProperties())
        .containsOnlyKeys("threshold", "minimumHosts", "requestVolume", "enforce");
    assertThat(property(hp, "spec.passive.latency").getProperties())
        .containsOnlyKeys("factor", "minimumSamples", "floor", "enforce");
  }

  /** Issue 32: off unless present; an empty block takes confirmers 2 and downPercent 50. */
  @Test
  void quorumIsOffUnlessPresentWithItsDefaultsAndRanges() {
    assertThat(property(hp, "spec.quorum").getDefault()).isNull();
    assertThat(property(hp, "spec.quorum").getProperties())
        .containsOnlyKeys("confirmers", "downPercent", "timeout");
    assertDefault(hp, "spec.quorum.confirmers", "2");
    assertDefault(hp, "spec.quorum.downPercent", "50");
    assertThat(property(hp, "spec.quorum.timeout").getDefault())
        .as("computed from interval x fall + timeout when absent")
        .isNull();
    assertRange(hp, "spec.quorum.confirmers", 1, 5);
    assertRange(hp, "spec.quorum.downPercent", 0, 99);
    assertThat(property(hp, "spec.quorum.timeout").getPattern()).isEqualTo(DURATION);
    assertThat(property(hp, "spec.quorum.timeout").getMaxLength()).isEqualTo(32L);
  }

  @Test
  void blocksDefaultToTheirFieldDefaultsSoAnEmptyPolicyIsComplete() {
    JsonNode spec = property(hp, "spec").getDefault();
    assertThat(spec.at("/active/interval").asText()).isEqualTo("5s");
    assertThat(spec.at("/passive/consecutiveErrors").asInt()).isEqualTo(5);
    assertThat(spec.at("/panicThresholdPercent").asInt()).isEqualTo(50);
    assertThat(property(hp, "spec.active").getDefault().get("fall").asInt()).isEqualTo(3);
    assertThat(property(hp, "spec.passive").getDefault().get("maxEjectionTime").asText())
        .isEqualTo("300s");
    assertThat(property(bp, "spec.service").getDefault().get("manage").asBoolean()).isTrue();
  }

  @Test
  void celRulesCoverTheCrossFieldChecks() {
    // each comparison after a check that its durations parse (CrdValidationRulesTest)
    assertThat(rules(hp, "spec.active"))
        .anySatisfy(
            rule -> assertThat(rule).endsWith("duration(self.timeout) < duration(self.interval)"));
    assertThat(rules(hp, "spec.active.interval"))
        .anySatisfy(rule -> assertThat(rule).endsWith("duration(self) >= duration('100ms')"));
    assertThat(rules(hp, "spec.passive"))
        .anySatisfy(
            rule ->
                assertThat(rule)
                    .endsWith("duration(self.maxEjectionTime) >= duration(self.baseEjectionTime)"));
    assertThat(rules(hp, "spec"))
        .contains(
            "!has(self.panicExitPercent) || self.panicExitPercent >= self.panicThresholdPercent");
    assertThat(rules(hp, "spec.active.http.expectedStatuses"))
        .anySatisfy(rule -> assertThat(rule).contains("s.substring(0, 3) <= s.substring(4, 7)"));
    assertThat(rules(hp, "spec.active.port"))
        .anySatisfy(rule -> assertThat(rule).contains("65535"));
    assertThat(rules(bp, "spec.ports.[].targetPort"))
        .anySatisfy(rule -> assertThat(rule).contains("65535"));
    assertThat(rules(bp, "spec.ports")).anySatisfy(rule -> assertThat(rule).contains("exists_one"));
    for (String path :
        List.of("spec", "spec.active", "spec.passive", "spec.active.http.expectedStatuses")) {
      JSONSchemaProps props = path.equals("spec") ? property(hp, "spec") : property(hp, path);
      assertThat(props.getXKubernetesValidations())
          .allSatisfy(rule -> assertThat(rule.getMessage()).isNotBlank());
    }
  }

  @Test
  void durationStringsAreBoundedSoCelCostStaysLow() {
    for (String path :
        List.of(
            "spec.active.interval",
            "spec.active.timeout",
            "spec.passive.baseEjectionTime",
            "spec.passive.maxEjectionTime",
            "spec.passive.sweepInterval",
            "spec.passive.latency.floor")) {
      assertThat(property(hp, path).getPattern()).as(path).isEqualTo(DURATION);
      assertThat(property(hp, path).getMaxLength()).as(path).isEqualTo(32L);
    }
    assertThat(property(hp, "spec.active.http.expectedStatuses").getMaxItems()).isEqualTo(32L);
    assertThat(property(hp, "spec.active.http.expectedStatuses.[]").getMaxLength()).isEqualTo(7L);
    // 16 keeps the targetPort rule inside the API server's CEL cost budget.
    assertThat(property(bp, "spec.ports").getMaxItems()).isEqualTo(16L);
  }

  @Test
  void durationPatternAcceptsGoDurationsAndRejectsTheRest() {
    Pattern duration = Pattern.compile(DURATION);
    for (String ok : List.of("5s", "100ms", "1m30s", "1.5s", "300s", "2h")) {
      assertThat(duration.matcher(ok).matches()).as(ok).isTrue();
    }
    for (String bad : List.of("", "5", "s", "-1s", "5sec", "1.s", "5 s", "1d")) {
      assertThat(duration.matcher(bad).matches()).as(bad).isFalse();
    }
    Pattern status =
        Pattern.compile(property(hp, "spec.active.http.expectedStatuses.[]").getPattern());
    for (String ok : List.of("200", "599", "200-399", "100-199")) {
      assertThat(status.matcher(ok).matches()).as(ok).isTrue();
    }
    for (String bad : List.of("99", "600", "2xx", "200-", "200-4000", "200-099", " 200")) {
      assertThat(status.matcher(bad).matches()).as(bad).isFalse();
    }
  }

  @Test
  void backendPoolFieldsRequiredDefaultedAndBounded() {
    assertThat(property(bp, "spec").getRequired())
        .containsExactlyInAnyOrder("policyRef", "ports"); // and one of selector, targets (CEL)
    assertThat(bp.getRequired()).contains("spec");
    assertThat(property(bp, "spec.policyRef").getRequired()).containsExactly("name");
    assertThat(property(bp, "spec.selector").getProperties())
        .containsKeys("matchLabels", "matchExpressions");
    assertThat(property(bp, "spec.ports").getMinItems()).isEqualTo(1L);
    assertThat(property(bp, "spec.ports.[]").getRequired()).containsExactly("port");
    assertRange(bp, "spec.ports.[].port", 1, 65535);
    assertThat(property(bp, "spec.ports.[].targetPort").getXKubernetesIntOrString()).isTrue();
    assertDefault(bp, "spec.ports.[].protocol", "\"TCP\"");
    assertThat(property(bp, "spec.ports.[].protocol").getEnum())
        .extracting(JsonNode::asText)
        .containsExactlyInAnyOrder("TCP", "UDP", "SCTP");
    assertThat(property(bp, "spec.service.name").getDefault()).isNull();
    assertDefault(bp, "spec.service.manage", "true");
    assertDefault(bp, "spec.maxEndpointsPerSlice", "100");
    assertRange(bp, "spec.maxEndpointsPerSlice", 1, 1000);
    assertDefault(bp, "spec.respectPodReadiness", "true");
  }

  @Test
  void statusSchemasHoldEveryDesignField() {
    assertThat(property(hp, "status").getProperties())
        .containsOnlyKeys(
            "observedGeneration",
            "conditions",
            "pools",
            "backends",
            "available",
            "panicking",
            "availability");
    assertThat(property(bp, "status").getProperties())
        .containsOnlyKeys(
            "observedGeneration",
            "policy",
            "total",
            "available",
            "down",
            "ejected",
            "panic",
            "availability",
            "conditions",
            "backends",
            "shard",
            "detection");
    assertThat(property(bp, "status.backends.[]").getProperties())
        .containsOnlyKeys(
            "pod",
            "address",
            "state",
            "available",
            "since",
            "ejections",
            "ejectedUntil",
            "ejectedBy",
            "merit",
            "meritTime",
            "dampedUntil",
            "lastProbe",
            "reason",
            "confirmedBy",
            "refutedBy",
            "abstained");
    assertThat(property(bp, "status.backends.[].state").getEnum())
        .extracting(JsonNode::asText)
        .containsExactlyInAnyOrder(
            "Unknown", "Up", "Down", "Ejected", "Damped", "Draining", "Maint");
    assertThat(property(bp, "status.backends.[].lastProbe").getProperties())
        .containsOnlyKeys("at", "ok", "latencyMs", "detail");
    assertThat(property(bp, "status.conditions.[]").getProperties())
        .containsKeys("type", "status", "reason", "message", "lastTransitionTime");
  }

  private static List<CustomResourceColumnDefinition> columns(CustomResourceDefinition crd) {
    return crd.getSpec().getVersions().get(0).getAdditionalPrinterColumns();
  }

  private static List<String> rules(JSONSchemaProps root, String path) {
    List<ValidationRule> rules = property(root, path).getXKubernetesValidations();
    assertThat(rules).as("x-kubernetes-validations of %s", path).isNotNull();
    return rules.stream().map(ValidationRule::getRule).toList();
  }

  private static void assertDefault(JSONSchemaProps root, String path, String json) {
    JsonNode expected = new KubernetesSerialization().unmarshal(json, JsonNode.class);
    assertThat(property(root, path).getDefault()).as("default of %s", path).isEqualTo(expected);
  }

  private static void assertRange(JSONSchemaProps root, String path, double min, double max) {
    JSONSchemaProps props = property(root, path);
    assertThat(props.getMinimum()).as("minimum of %s", path).isEqualTo(min);
    assertThat(props.getMaximum()).as("maximum of %s", path).isEqualTo(max);
  }

  private static void collectMissingDescriptions(
      String path, JSONSchemaProps props, List<String> missing) {
    if (props.getProperties() != null) {
      for (Map.Entry<String, JSONSchemaProps> entry : props.getProperties().entrySet()) {
        String child = path + "." + entry.getKey();
        boolean topLevel = path.indexOf('.') < 0;
        boolean kubernetesOwned =
            topLevel && Set.of("apiVersion", "kind", "metadata").contains(entry.getKey());
        if (!kubernetesOwned
            && (entry.getValue().getDescription() == null
                || entry.getValue().getDescription().isBlank())) {
          missing.add(child);
        }
        if (!FOREIGN.contains(entry.getKey())) {
          collectMissingDescriptions(child, entry.getValue(), missing);
        }
      }
    }
    if (props.getItems() != null && props.getItems().getSchema() != null) {
      collectMissingDescriptions(path + "[]", props.getItems().getSchema(), missing);
    }
  }
}
