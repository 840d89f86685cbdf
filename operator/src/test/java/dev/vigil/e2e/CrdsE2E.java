package dev.vigil.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.nio.file.Files;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The CRDs in {@code crds/} on a real API server: accepted, explained, and enforcing their schema
 * and CEL rules at admission (the Fabric8 mock server does none of this).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CrdsE2E {
  private static E2eCluster cluster;
  private static String ns;

  @BeforeAll
  static void crds() {
    cluster = E2eCluster.get();
    cluster.applyCrds();
    ns = cluster.freshNamespace("crds");
  }

  @Test
  void kubectlApplyServerSideOfTheCrdsIsAcceptedAndIdempotent() {
    // the README's command: server-side, as every apply of the CRDs in these tests (a client-side
    // apply first makes the next server-side one conflict on .spec.versions)
    E2eCluster.Result again =
        cluster.kubectl("apply", "--server-side", "-f", cluster.path("crds").toString());
    again.assertOk();
    assertThat(again.out())
        .contains("customresourcedefinition.apiextensions.k8s.io/healthpolicies.vigil.dev")
        .contains("customresourcedefinition.apiextensions.k8s.io/backendpools.vigil.dev");
    String resources =
        cluster.kubectl("api-resources", "--api-group", "vigil.dev", "-o", "wide").assertOk().out();
    assertThat(resources).containsPattern("healthpolicies\\s+hp\\s+vigil.dev/v1alpha1\\s+true");
    assertThat(resources).containsPattern("backendpools\\s+bp\\s+vigil.dev/v1alpha1\\s+true");
    // The category: kubectl get vigil lists both kinds.
    cluster.kubectl("get", "vigil", "-n", ns).assertOk();
  }

  @Test
  void kubectlExplainShowsTheFieldDescriptions() throws IOException {
    JSONSchemaProps active =
        schema("healthpolicies.vigil.dev-v1.yml")
            .getProperties()
            .get("spec")
            .getProperties()
            .get("active");
    // The OpenAPI document of a new CRD is published a moment after it is Established.
    String[] out = new String[1];
    await()
        .atMost(Duration.ofSeconds(30))
        .pollInterval(Duration.ofSeconds(1))
        .until(
            () -> {
              E2eCluster.Result r = cluster.kubectl("explain", "healthpolicy.spec.active");
              out[0] = r.out();
              return r.exit() == 0;
            });
    String text = squash(out[0]);
    assertThat(text).contains(squash(active.getDescription()));
    for (String field : List.of("interval", "timeout", "rise", "fall", "protocol", "http")) {
      assertThat(text)
          .as("description of active.%s", field)
          .contains(squash(active.getProperties().get(field).getDescription()));
    }
  }

  @Test
  void theExampleAppliesServerSideAndIsDefaulted() {
    // Vigil itself writes with create, update and PUT of /status (no server-side apply); users
    // apply its resources server-side, which needs a structural schema and list types.
    String example = cluster.path("examples/web.yaml").toString();
    cluster.kubectl("apply", "--server-side", "--field-manager", "e2e", "-f", example).assertOk();
    String sweep =
        cluster
            .kubectl(
                "get",
                "healthpolicy",
                "web",
                "-n",
                "shop",
                "-o",
                "jsonpath={.spec.passive.sweepInterval}")
            .assertOk()
            .out();
    assertThat(sweep).isEqualTo("10s");
    cluster.kubectl("apply", "--server-side", "--field-manager", "e2e", "-f", example).assertOk();
  }

  static Stream<String> examples() throws IOException {
    try (Stream<java.nio.file.Path> files = Files.list(E2eCluster.findRepo().resolve("examples"))) {
      return files
          .map(p -> p.getFileName().toString())
          .filter(n -> n.endsWith(".yaml"))
          .sorted()
          .toList()
          .stream();
    }
  }

  /** Every example applies as it is, server-side: the README tells users to apply them. */
  @ParameterizedTest(name = "{0}")
  @MethodSource("examples")
  void everyExampleAppliesServerSide(String name) {
    String example = cluster.path("examples/" + name).toString();
    cluster.kubectl("apply", "--server-side", "--field-manager", "e2e", "-f", example).assertOk();
  }

  static Stream<Arguments> invalid() {
    return Stream.of(
        hp("rise 0", "spec.active.rise", "active.rise", 0),
        hp("fall 101", "spec.active.fall", "active.fall", 101),
        hp("timeout equal to interval", "spec.active.timeout", "active.timeout", "2s"),
        hp("timeout above interval", "spec.active.timeout", "active.timeout", "3s"),
        hp("interval below 100ms", "spec.active.interval", "active.interval", "50ms"),
        hp("interval not a duration", "spec.active.interval", "active.interval", "5 seconds"),
        hp("jitterPercent 51", "spec.active.jitterPercent", "active.jitterPercent", 51),
        hp("unknown protocol", "spec.active.protocol", "active.protocol", "UDP"),
        hp("active port 70000", "spec.active.port", "active.port", 70000),
        hp("http path without slash", "spec.active.http.path", "active.http.path", "healthz"),
        hp(
            "status range high-low",
            "spec.active.http.expectedStatuses",
            "active.http.expectedStatuses",
            List.of("200", "399-200")),
        hp(
            "status 600",
            "spec.active.http.expectedStatuses[0]",
            "active.http.expectedStatuses",
            List.of("600")),
        hp("panicThresholdPercent 101", "spec.panicThresholdPercent", "panicThresholdPercent", 101),
        hp("panicExitPercent below threshold", "spec.panicExitPercent", "panicExitPercent", 40),
        hp(
            "maxEjectionPercent 101",
            "spec.passive.maxEjectionPercent",
            "passive.maxEjectionPercent",
            101),
        hp(
            "maxEjectionTime below baseEjectionTime",
            "spec.passive.maxEjectionTime",
            "passive.maxEjectionTime",
            "10s"),
        hp(
            "baseEjectionTime 0s",
            "spec.passive.baseEjectionTime",
            "passive.baseEjectionTime",
            "0s"),
        hp(
            "consecutiveErrors 1001",
            "spec.passive.consecutiveErrors",
            "passive.consecutiveErrors",
            1001),
        bp("missing selector", "spec.selector", "selector", null),
        bp("missing policyRef", "spec.policyRef", "policyRef", null),
        bp("no ports", "spec.ports", "ports", List.of()),
        bp("port 0", "spec.ports[0].port", "ports", List.of(Map.of("name", "http", "port", 0))),
        bp(
            "targetPort 65536",
            "spec.ports[0].targetPort",
            "ports",
            List.of(Map.of("name", "http", "port", 80, "targetPort", 65536))),
        bp(
            "two ports with one name",
            "spec.ports",
            "ports",
            List.of(Map.of("name", "http", "port", 80), Map.of("name", "http", "port", 81))),
        bp("maxEndpointsPerSlice 0", "spec.maxEndpointsPerSlice", "maxEndpointsPerSlice", 0),
        bp("service name with capitals", "spec.service.name", "service", Map.of("name", "Web_1")));
  }

  @Test
  void theValidBaseObjectsAreAccepted() {
    create(object("HealthPolicy", "base-hp", HP_SPEC, null, null)).assertOk();
    create(object("BackendPool", "base-bp", BP_SPEC, null, null)).assertOk();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("invalid")
  void anInvalidObjectIsRejectedAtAdmissionNamingTheField(
      String name, String kind, String field, String path, Object value) {
    String yaml =
        object(kind, "bad-" + Integer.toHexString(name.hashCode()), specOf(kind), path, value);
    E2eCluster.Result r = create(yaml);
    assertThat(r.exit())
        .as("kubectl create of %s:%n%s%nstdout: %s", name, yaml, r.out())
        .isNotZero();
    assertThat(r.err()).as("rejection of %s", name).contains("is invalid").contains(field);
  }

  private static Arguments hp(String name, String field, String path, Object value) {
    return Arguments.of(name, "HealthPolicy", field, path, value);
  }

  private static Arguments bp(String name, String field, String path, Object value) {
    return Arguments.of(name, "BackendPool", field, path, value);
  }

  private static final String HP_SPEC =
      """
      active:
        protocol: HTTP
        port: 8080
        interval: 2s
        timeout: 1s
        jitterPercent: 10
        rise: 2
        fall: 3
        http: {method: GET, path: /healthz, expectedStatuses: ["200-399"]}
      passive:
        consecutiveErrors: 5
        baseEjectionTime: 30s
        maxEjectionTime: 300s
        maxEjectionPercent: 10
      panicThresholdPercent: 50
      """;

  private static final String BP_SPEC =
      """
      policyRef: {name: web}
      selector: {matchLabels: {app: web}}
      ports: [{name: http, port: 80, targetPort: 8080, protocol: TCP}]
      maxEndpointsPerSlice: 100
      service: {name: web, manage: true}
      """;

  private static String specOf(String kind) {
    return kind.equals("HealthPolicy") ? HP_SPEC : BP_SPEC;
  }

  /** The object with {@code spec.<path>} set to {@code value} (null: removed). */
  @SuppressWarnings("unchecked")
  private static String object(String kind, String name, String spec, String path, Object value) {
    Map<String, Object> specMap = new LinkedHashMap<>(Serialization.unmarshal(spec, Map.class));
    if (path != null) {
      String[] parts = path.split("\\.");
      Map<String, Object> at = specMap;
      for (int i = 0; i < parts.length - 1; i++) {
        Map<String, Object> next = new LinkedHashMap<>((Map<String, Object>) at.get(parts[i]));
        at.put(parts[i], next);
        at = next;
      }
      if (value == null) {
        at.remove(parts[parts.length - 1]);
      } else {
        at.put(parts[parts.length - 1], value);
      }
    }
    Map<String, Object> object = new LinkedHashMap<>();
    object.put("apiVersion", "vigil.dev/v1alpha1");
    object.put("kind", kind);
    object.put("metadata", Map.of("name", name, "namespace", ns));
    object.put("spec", specMap);
    return Serialization.asYaml(object);
  }

  private static E2eCluster.Result create(String yaml) {
    return cluster.kubectlIn(yaml, "create", "-f", "-");
  }

  private static JSONSchemaProps schema(String file) throws IOException {
    CustomResourceDefinition crd =
        Serialization.unmarshal(
            Files.readString(cluster.path("crds").resolve(file)), CustomResourceDefinition.class);
    return crd.getSpec().getVersions().get(0).getSchema().getOpenAPIV3Schema();
  }

  private static String squash(String s) {
    return s.replaceAll("\\s+", " ").trim();
  }
}
