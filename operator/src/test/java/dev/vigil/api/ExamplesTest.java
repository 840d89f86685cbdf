package dev.vigil.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.api.v1alpha1.HealthPolicy;
import dev.vigil.api.v1alpha1.Protocol;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Every file in examples/ parses into the API classes with no unknown field, its policies and pools
 * validate against the generated CRD schemas (defaults, structure, CEL rules), and its references
 * (policy, selector, port names, reporter ClusterRole) point at something that exists.
 */
class ExamplesTest {

  private static final Map<String, Class<? extends HasMetadata>> KINDS =
      Map.of(
          "Namespace", Namespace.class,
          "ConfigMap", io.fabric8.kubernetes.api.model.ConfigMap.class,
          "Secret", io.fabric8.kubernetes.api.model.Secret.class,
          "Deployment", Deployment.class,
          "ServiceAccount", ServiceAccount.class,
          "RoleBinding", RoleBinding.class,
          "HealthPolicy", HealthPolicy.class,
          "BackendPool", BackendPool.class);

  private static final Map<String, JSONSchemaProps> SCHEMAS =
      Map.of(
          "HealthPolicy", GeneratedCrds.schema(GeneratedCrds.healthPolicy()),
          "BackendPool", GeneratedCrds.schema(GeneratedCrds.backendPool()));

  private final ObjectMapper strictYaml =
      new ObjectMapper(new YAMLFactory())
          .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, true);

  @Test
  void webExampleHasADeploymentAPolicyAndAPoolInShop() throws IOException {
    List<HasMetadata> resources = load(examples().resolve("web.yaml"));

    assertThat(resources)
        .extracting(HasMetadata::getKind)
        .containsExactly("Namespace", "Deployment", "HealthPolicy", "BackendPool");
    assertThat(resources.subList(1, 4))
        .allSatisfy(resource -> assertThat(resource.getMetadata().getNamespace()).isEqualTo("shop"))
        .allSatisfy(resource -> assertThat(resource.getMetadata().getName()).isEqualTo("web"));

    Deployment web = (Deployment) resources.get(1);
    HealthPolicy policy = (HealthPolicy) resources.get(2);
    BackendPool pool = (BackendPool) resources.get(3);
    assertThat(policy.getSpec().getActive().getProtocol()).isEqualTo(Protocol.HTTP);
    assertThat(policy.getSpec().getActive().getPort().getStrVal())
        .isEqualTo(
            web.getSpec()
                .getTemplate()
                .getSpec()
                .getContainers()
                .get(0)
                .getPorts()
                .get(0)
                .getName());
    assertThat(pool.getSpec().getPolicyRef().getName()).isEqualTo(policy.getMetadata().getName());
    assertThat(pool.getSpec().getSelector().getMatchLabels())
        .isEqualTo(web.getSpec().getSelector().getMatchLabels())
        .isEqualTo(web.getSpec().getTemplate().getMetadata().getLabels());
    assertThat(pool.getSpec().getPorts()).hasSize(1);
  }

  @Test
  void theExamplesAreKnown() throws IOException {
    assertThat(exampleFiles())
        .extracting(p -> p.getFileName().toString())
        .containsExactly(
            "agent.yaml",
            "external-targets.yaml",
            "grpc.yaml",
            "http2.yaml",
            "passive.yaml",
            "probe-tls.yaml",
            "tcp.yaml",
            "web.yaml",
            "websocket.yaml");
  }

  @Test
  void everyPolicyAndPoolValidatesAgainstTheGeneratedSchemas() throws IOException {
    int checked = 0;
    for (Path file : exampleFiles()) {
      for (JsonNode tree : documents(file)) {
        JSONSchemaProps schema = SCHEMAS.get(tree.get("kind").asText());
        if (schema != null) {
          assertThat(CrdSchema.validateSpec(schema, tree))
              .as("%s %s in %s", tree.get("kind"), tree.at("/metadata/name"), file.getFileName())
              .isEmpty();
          checked++;
        }
      }
    }
    assertThat(checked).isEqualTo(18);
  }

  @Test
  void theSchemaRefusesAPoolWithBothSelectorAndTargetsOrABadTarget() throws IOException {
    JsonNode pool =
        documents(examples().resolve("external-targets.yaml")).stream()
            .filter(t -> t.get("kind").asText().equals("BackendPool"))
            .findFirst()
            .orElseThrow();
    ObjectNode both = pool.deepCopy();
    ((ObjectNode) both.get("spec")).putObject("selector").putObject("matchLabels").put("app", "db");
    assertThat(CrdSchema.validateSpec(SCHEMAS.get("BackendPool"), both))
        .anySatisfy(p -> assertThat(p).contains("exactly one of spec.selector and spec.targets"));
    ObjectNode neither = pool.deepCopy();
    ((ObjectNode) neither.get("spec")).remove("targets");
    assertThat(CrdSchema.validateSpec(SCHEMAS.get("BackendPool"), neither))
        .anySatisfy(p -> assertThat(p).contains("exactly one of spec.selector and spec.targets"));
    ObjectNode twoKinds = pool.deepCopy();
    ((ObjectNode) twoKinds.get("spec").get("targets").get(0)).put("hostname", "db.example.com");
    assertThat(CrdSchema.validateSpec(SCHEMAS.get("BackendPool"), twoKinds))
        .anySatisfy(p -> assertThat(p).contains("exactly one of address and hostname"));
  }

  @Test
  void theSchemaCheckCatchesWhatTheApiServerWouldRefuse() throws IOException {
    JsonNode policy =
        documents(examples().resolve("tcp.yaml")).stream()
            .filter(t -> t.get("kind").asText().equals("HealthPolicy"))
            .findFirst()
            .orElseThrow();
    ObjectNode bad = policy.deepCopy();
    ObjectNode active = (ObjectNode) bad.get("spec").get("active");
    active.put("protocol", "UDP");
    active.put("timeout", "5s");
    active.put("rise", 0);
    active.put("intervall", "1s");
    ((ObjectNode) bad.get("spec")).put("panicExitPercent", 10);

    assertThat(CrdSchema.validateSpec(SCHEMAS.get("HealthPolicy"), bad))
        .anySatisfy(p -> assertThat(p).contains("spec.active.protocol").contains("UDP"))
        .anySatisfy(p -> assertThat(p).contains("timeout must be shorter than interval"))
        .anySatisfy(p -> assertThat(p).contains("spec.active.rise").contains("minimum"))
        .anySatisfy(p -> assertThat(p).contains("spec.active.intervall: unknown field"))
        .anySatisfy(p -> assertThat(p).contains("panicExitPercent must be at least"));
  }

  /**
   * The probe-TLS example's policy resolves with the ConfigMap and Secret of its own file, as the
   * operator would read them (labelled objects only): the PEM is valid and the labels are there.
   */
  @Test
  void theProbeTlsExampleResolvesWithItsOwnLabelledObjects() throws IOException {
    List<HasMetadata> resources = load(examples().resolve("probe-tls.yaml"));
    Map<String, Map<String, String>> configMaps = new java.util.HashMap<>();
    Map<String, Map<String, String>> secrets = new java.util.HashMap<>();
    for (HasMetadata r : resources) {
      Map<String, String> labels = r.getMetadata().getLabels();
      boolean labelled =
          labels != null && "true".equals(labels.get(dev.vigil.reconcile.ProbeTlsObjects.LABEL));
      if (labelled && r instanceof io.fabric8.kubernetes.api.model.ConfigMap c) {
        configMaps.put(c.getMetadata().getName(), c.getData());
      }
      if (labelled && r instanceof io.fabric8.kubernetes.api.model.Secret s) {
        secrets.put(s.getMetadata().getName(), dev.vigil.reconcile.ProbeTlsSources.decoded(s));
      }
    }
    HealthPolicy policy =
        resources.stream()
            .filter(HealthPolicy.class::isInstance)
            .map(HealthPolicy.class::cast)
            .findFirst()
            .orElseThrow();
    dev.vigil.reconcile.ResolvedPolicy resolved =
        dev.vigil.reconcile.PolicyResolver.resolve(
            policy,
            dev.vigil.reconcile.TenantFloors.NONE,
            new dev.vigil.reconcile.ProbeTlsObjects() {
              @Override
              public Map<String, String> configMap(String namespace, String name) {
                return configMaps.get(name);
              }

              @Override
              public Map<String, String> secret(String namespace, String name) {
                return secrets.get(name);
              }

              @Override
              public boolean secretsReadable() {
                return true;
              }
            });
    assertThat(resolved.check().tls().material().hasCa()).isTrue();
    assertThat(resolved.check().tls().material().hasClientCertificate()).isTrue();
  }

  @Test
  void everyReferenceInAnExamplePointsAtSomethingInTheSameFile() throws IOException {
    for (Path file : exampleFiles()) {
      List<HasMetadata> resources = load(file);
      String where = file.getFileName().toString();
      for (BackendPool pool : ofType(resources, BackendPool.class)) {
        if (pool.getSpec().getTargets() != null) {
          // targets have no container ports: every targetPort is a number
          assertThat(pool.getSpec().getPorts())
              .as("%s: targetPorts of targets", where)
              .allSatisfy(p -> assertThat(p.getTargetPort().getIntVal()).isNotNull());
          continue;
        }
        HealthPolicy policy =
            ofType(resources, HealthPolicy.class).stream()
                .filter(
                    p -> p.getMetadata().getName().equals(pool.getSpec().getPolicyRef().getName()))
                .filter(
                    p -> p.getMetadata().getNamespace().equals(pool.getMetadata().getNamespace()))
                .findFirst()
                .orElseThrow(() -> new AssertionError(where + ": no policy for " + pool));
        Deployment workload =
            ofType(resources, Deployment.class).stream()
                .filter(
                    d ->
                        d.getSpec()
                            .getTemplate()
                            .getMetadata()
                            .getLabels()
                            .entrySet()
                            .containsAll(pool.getSpec().getSelector().getMatchLabels().entrySet()))
                .findFirst()
                .orElseThrow(() -> new AssertionError(where + ": no Deployment for " + pool));
        List<String> containerPorts =
            workload.getSpec().getTemplate().getSpec().getContainers().stream()
                .flatMap(c -> c.getPorts().stream())
                .flatMap(
                    p ->
                        java.util.stream.Stream.of(
                            p.getName(), String.valueOf(p.getContainerPort())))
                .toList();
        assertThat(containerPorts)
            .as("%s: the policy's port", where)
            .contains(portText(policy.getSpec().getActive().getPort()));
        for (var port : pool.getSpec().getPorts()) {
          assertThat(containerPorts)
              .as("%s: targetPort of %s", where, port.getName())
              .contains(portText(port.getTargetPort()));
        }
      }
      for (RoleBinding binding : ofType(resources, RoleBinding.class)) {
        assertThat(binding.getRoleRef().getKind()).isEqualTo("ClusterRole");
        assertThat(binding.getRoleRef().getName()).isEqualTo("vigil-outcome-reporter");
        assertThat(binding.getSubjects())
            .allSatisfy(
                sub ->
                    assertThat(ofType(resources, ServiceAccount.class))
                        .anySatisfy(
                            sa -> assertThat(sa.getMetadata().getName()).isEqualTo(sub.getName())));
      }
    }
  }

  private static String portText(io.fabric8.kubernetes.api.model.IntOrString port) {
    return port.getStrVal() != null ? port.getStrVal() : String.valueOf(port.getIntVal());
  }

  private static <T> List<T> ofType(List<HasMetadata> resources, Class<T> type) {
    return resources.stream().filter(type::isInstance).map(type::cast).toList();
  }

  private static List<Path> exampleFiles() throws IOException {
    try (var files = Files.list(examples())) {
      return files.filter(p -> p.toString().endsWith(".yaml")).sorted().toList();
    }
  }

  private List<JsonNode> documents(Path file) throws IOException {
    List<JsonNode> out = new ArrayList<>();
    for (String document : Files.readString(file).split("(?m)^---\\s*$")) {
      JsonNode tree = strictYaml.readTree(document);
      if (tree != null && !tree.isEmpty()) {
        out.add(tree);
      }
    }
    return out;
  }

  private List<HasMetadata> load(Path file) throws IOException {
    List<HasMetadata> resources = new ArrayList<>();
    for (String document : Files.readString(file).split("(?m)^---\\s*$")) {
      JsonNode tree = strictYaml.readTree(document);
      if (tree == null || tree.isEmpty()) {
        continue;
      }
      Class<? extends HasMetadata> type = KINDS.get(tree.get("kind").asText());
      assertThat(type).as("kind %s", tree.get("kind")).isNotNull();
      resources.add(strictYaml.treeToValue(tree, type));
    }
    return resources;
  }

  private static Path examples() {
    return GeneratedCrds.committedDirectory().resolveSibling("examples");
  }
}
