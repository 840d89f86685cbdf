package dev.vigil.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.api.v1alpha1.HealthPolicy;
import dev.vigil.api.v1alpha1.Protocol;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** examples/web.yaml parses into the API classes, field for field. */
class ExamplesTest {

  private static final Map<String, Class<? extends HasMetadata>> KINDS =
      Map.of(
          "Namespace", Namespace.class,
          "Deployment", Deployment.class,
          "HealthPolicy", HealthPolicy.class,
          "BackendPool", BackendPool.class);

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
