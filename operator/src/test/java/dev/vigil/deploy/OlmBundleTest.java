package dev.vigil.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigil.deploy.RbacCalls.Grant;
import dev.vigil.deploy.RbacCalls.Scope;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The OLM bundle in {@code deploy/olm} cannot drift from the chart, {@code crds/} and {@code
 * examples/}: its generated files equal what {@link OlmBundle} makes now, and the permissions it
 * asks OLM for are the calls in {@code deploy/rbac-calls.yaml}. Regenerate with {@value
 * OlmBundle#REGENERATE}. The operator-framework's own validation runs in .ci/run
 * (e2e/bundle-validate).
 */
class OlmBundleTest {
  private static final boolean REGENERATE = Boolean.getBoolean("vigil.deploy.regenerate");

  private static VigilChart chart;
  private static OlmBundle bundle;
  private static Path root;

  @BeforeAll
  static void load() {
    chart = VigilChart.locate();
    bundle = new OlmBundle(chart);
    root = chart.repoRoot();
  }

  @Test
  void theClusterServiceVersionIsInStepWithTheChartAndExamples() throws IOException {
    Path csv = root.resolve(OlmBundle.CSV);
    String generated = bundle.csv(Files.readString(csv));
    if (REGENERATE) {
      Files.writeString(csv, generated);
    }
    assertThat(Files.readString(csv))
        .as("%s is stale; regenerate it with: %s", OlmBundle.CSV, OlmBundle.REGENERATE)
        .isEqualTo(generated);
  }

  @Test
  void theBundlesCrdsAreTheCrdsAndNothingElse() throws IOException {
    Map<Path, Path> copies = bundle.crdCopies();
    assertThat(copies).hasSize(2);
    for (Map.Entry<Path, Path> copy : copies.entrySet()) {
      if (REGENERATE) {
        Files.copy(
            copy.getValue(), copy.getKey(), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
      }
      assertThat(copy.getKey())
          .as("%s; regenerate: %s", copy.getKey(), OlmBundle.REGENERATE)
          .hasSameBinaryContentAs(copy.getValue());
    }
  }

  @Test
  void theOtherManifestsAreRenderedFromTheChart() throws IOException {
    Path manifests = root.resolve(OlmBundle.DIR).resolve("manifests");
    for (Map.Entry<String, String> file : bundle.otherManifests().entrySet()) {
      Path path = manifests.resolve(file.getKey());
      if (REGENERATE) {
        Files.writeString(path, file.getValue());
      }
      assertThat(path).as("regenerate: %s", OlmBundle.REGENERATE).hasContent(file.getValue());
    }
    Set<String> expected = new TreeSet<>(bundle.otherManifests().keySet());
    expected.add(Path.of(OlmBundle.CSV).getFileName().toString());
    bundle.crdCopies().keySet().forEach(p -> expected.add(p.getFileName().toString()));
    Set<String> present;
    try (Stream<Path> files = Files.list(manifests)) {
      present =
          files.map(p -> p.getFileName().toString()).collect(Collectors.toCollection(TreeSet::new));
    }
    assertThat(present).as("files in %s/manifests", OlmBundle.DIR).isEqualTo(expected);
  }

  @Test
  void asksOlmForExactlyTheCallsTheOperatorMakes() throws IOException {
    RbacCalls calls = RbacCalls.load(root.resolve("deploy/rbac-calls.yaml"));
    JsonNode install = install();
    assertThat(install.path("clusterPermissions")).hasSize(1);
    assertThat(install.path("permissions")).hasSize(1);
    assertThat(grants(install.at("/clusterPermissions/0/rules")))
        .as("clusterPermissions: the cluster-scoped reviews")
        .isEqualTo(calls.grants(Scope.CLUSTER));
    Set<Grant> namespaced = new TreeSet<>(calls.grants(Scope.WATCHED));
    namespaced.addAll(calls.grants(Scope.RELEASE));
    assertThat(grants(install.at("/permissions/0/rules")))
        .as("permissions: granted by OLM in the OperatorGroup's namespaces and the operator's")
        .isEqualTo(namespaced);
    String serviceAccount =
        install.at("/deployments/0/spec/template/spec/serviceAccountName").asText();
    assertThat(install.at("/clusterPermissions/0/serviceAccountName").asText())
        .isEqualTo(serviceAccount);
    assertThat(install.at("/permissions/0/serviceAccountName").asText()).isEqualTo(serviceAccount);
  }

  @Test
  void watchesTheOperatorGroupsNamespacesInEveryInstallMode() throws IOException {
    JsonNode csv = csv();
    assertThat(csv.at("/spec/installModes"))
        .extracting(m -> m.path("type").asText() + "=" + m.path("supported").asBoolean())
        .containsExactly(
            "OwnNamespace=true",
            "SingleNamespace=true",
            "MultiNamespace=true",
            "AllNamespaces=true");
    JsonNode env = install().at("/deployments/0/spec/template/spec/containers/0/env");
    List<JsonNode> namespaces = new ArrayList<>();
    env.forEach(
        e -> {
          if (e.path("name").asText().equals("VIGIL_NAMESPACES")) {
            namespaces.add(e);
          }
        });
    assertThat(namespaces)
        .singleElement()
        .satisfies(
            e ->
                assertThat(e.at("/valueFrom/fieldRef/fieldPath").asText())
                    .isEqualTo(OlmBundle.TARGET_NAMESPACES));
  }

  @Test
  void ownsBothCrdsWithSpecAndStatusDescriptorsOfFieldsTheyHave() throws IOException {
    JsonNode owned = csv().at("/spec/customresourcedefinitions/owned");
    assertThat(owned)
        .extracting(o -> o.path("name").asText())
        .containsExactlyInAnyOrder("healthpolicies.vigil.dev", "backendpools.vigil.dev");
    ObjectMapper yaml = new ObjectMapper(new com.fasterxml.jackson.dataformat.yaml.YAMLFactory());
    for (JsonNode crd : owned) {
      String plural = crd.path("name").asText().split("\\.")[0];
      JsonNode schema =
          yaml.readTree(root.resolve("crds/" + crd.path("name").asText() + "-v1.yml").toFile())
              .at("/spec/versions/0/schema/openAPIV3Schema/properties");
      assertThat(crd.path("specDescriptors")).as(plural).hasSizeGreaterThanOrEqualTo(5);
      assertThat(crd.path("statusDescriptors")).as(plural).hasSizeGreaterThanOrEqualTo(4);
      for (String section : List.of("spec", "status")) {
        for (JsonNode descriptor : crd.path(section + "Descriptors")) {
          JsonNode node = schema.path(section);
          for (String part : descriptor.path("path").asText().split("\\.")) {
            node = node.path("properties").path(part);
          }
          assertThat(node.isMissingNode())
              .as(
                  "%s %s descriptor %s names no field of the CRD",
                  plural, section, descriptor.path("path").asText())
              .isFalse();
          assertThat(descriptor.path("x-descriptors")).as(descriptor.toString()).isNotEmpty();
        }
      }
    }
  }

  @Test
  void offersEveryExampleAndTheMetadataAndImageLabelsAgree() throws IOException {
    JsonNode examples =
        new ObjectMapper().readTree(csv().at("/metadata/annotations/alm-examples").asText());
    assertThat(examples)
        .extracting(e -> e.path("kind").asText() + "/" + e.at("/metadata/name").asText())
        .startsWith("HealthPolicy/web", "BackendPool/web")
        .hasSizeGreaterThanOrEqualTo(8);
    JsonNode annotations =
        OlmBundle.read(Files.readString(root.resolve(OlmBundle.DIR + "/metadata/annotations.yaml")))
            .path("annotations");
    assertThat(annotations.path("operators.operatorframework.io.bundle.package.v1").asText())
        .isEqualTo("vigil");
    List<String> labels =
        Files.readAllLines(root.resolve(OlmBundle.DIR + "/bundle.Dockerfile")).stream()
            .filter(l -> l.startsWith("LABEL "))
            .map(l -> l.substring(6))
            .toList();
    List<String> expected = new ArrayList<>();
    annotations
        .fields()
        .forEachRemaining(f -> expected.add(f.getKey() + "=" + f.getValue().asText()));
    assertThat(labels).containsExactlyElementsOf(expected);
  }

  private static JsonNode csv() throws IOException {
    return OlmBundle.read(Files.readString(root.resolve(OlmBundle.CSV)));
  }

  private static JsonNode install() throws IOException {
    return csv().at("/spec/install/spec");
  }

  private static Set<Grant> grants(JsonNode rules) {
    List<PolicyRule> parsed = new ArrayList<>();
    ObjectMapper json = new ObjectMapper();
    for (JsonNode rule : rules) {
      parsed.add(json.convertValue(rule, PolicyRule.class));
    }
    assertThat(parsed)
        .allSatisfy(
            r -> {
              assertThat(r.getVerbs()).doesNotContain("*");
              assertThat(r.getResources()).doesNotContain("*");
            });
    return RbacCalls.grantsOf(parsed);
  }
}
