package dev.vigil.ops;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.vigil.api.Conditions;
import dev.vigil.publish.PublishingGuard;
import dev.vigil.publish.SlicePublisher;
import dev.vigil.reconcile.TransitionReporter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The README and docs/metrics.md name what the code has: commands, fields, reasons, metrics. */
class DocsTest {
  private static final Path ROOT = root();

  @Test
  void setUpHasExactlyTheDemoAndTheBuildCommand() throws IOException {
    String readme = Files.readString(ROOT.resolve("README.md"));
    String setUp = readme.substring(readme.indexOf("## Set up"));
    setUp = setUp.substring(setUp.indexOf("```") + 3);
    setUp = setUp.substring(setUp.indexOf('\n') + 1, setUp.indexOf("```"));
    List<String> commands =
        setUp.lines().filter(l -> !l.isBlank()).map(l -> l.replaceAll("\\s+#.*", "")).toList();
    assertThat(commands)
        .containsExactly("java -jar operator/target/vigil-operator.jar demo", "mvn -B verify");
  }

  @Test
  void troubleshootingCoversEveryReadyReason() throws IOException {
    String readme = Files.readString(ROOT.resolve("README.md"));
    for (String reason :
        List.of(
            Conditions.POLICY_NOT_FOUND,
            Conditions.INVALID_POLICY,
            Conditions.NO_BACKENDS,
            Conditions.SERVICE_HAS_SELECTOR,
            Conditions.FOREIGN_ENDPOINT_SLICES,
            Conditions.SERVICE_CONFLICT,
            PublishingGuard.SERVICE_NOT_FOUND,
            Conditions.PUBLISH_FAILED)) {
      assertThat(readme).contains("| `" + reason + "` |");
    }
  }

  @Test
  void everyHealthPolicyFieldIsInTheReadmeTable() throws IOException {
    String readme = Files.readString(ROOT.resolve("README.md"));
    JsonNode crd =
        new ObjectMapper(new YAMLFactory())
            .readTree(ROOT.resolve("crds/healthpolicies.vigil.dev-v1.yml").toFile());
    JsonNode spec = crd.at("/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties");
    List<String> fields = new ArrayList<>();
    for (Iterator<Map.Entry<String, JsonNode>> it = spec.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> top = it.next();
      JsonNode props = top.getValue().get("properties");
      if (props == null) {
        fields.add(top.getKey());
      } else {
        props.fieldNames().forEachRemaining(f -> fields.add(top.getKey() + "." + f));
      }
    }
    assertThat(fields).hasSizeGreaterThan(20);
    for (String field : fields) {
      String last = field.substring(field.lastIndexOf('.') + 1);
      assertThat(readme)
          .as(field)
          .containsAnyOf("`" + field + "`", "`" + field + ".", "." + last + "`");
    }
  }

  @Test
  void metricsDocNamesEveryMetricTheCodeRegisters() throws IOException {
    String doc = Files.readString(ROOT.resolve("docs/metrics.md"));
    for (String name :
        List.of(
            MeteredProber.PROBES + "_total",
            MeteredProber.DURATION + "_seconds",
            PoolGauges.BACKENDS,
            PoolGauges.AVAILABLE,
            PoolGauges.PANIC,
            PoolGauges.EJECTED,
            PoolGauges.DAMPED,
            MeteredWriteCounter.WRITES + "_total",
            SlicePublisher.PUBLISH_SECONDS,
            SlicePublisher.PUBLISH_FAILURES,
            TransitionReporter.TRANSITIONS,
            TransitionReporter.EJECTIONS,
            TransitionReporter.UNEJECTIONS,
            TransitionReporter.REFUSED,
            TransitionReporter.DRY_RUN,
            TransitionReporter.PANIC_TRANSITIONS,
            TransitionReporter.DAMPINGS,
            TransitionReporter.RELEASES)) {
      assertThat(doc).contains("| `" + name + "` |");
    }
    assertThat(doc).contains("at most " + PoolGauges.MAX_EJECTED_PER_POOL + " per pool");
  }

  @Test
  void thePrometheusRuleUsesMetricsThatExist() throws IOException {
    String rule = Files.readString(ROOT.resolve("deploy/helm/vigil/templates/prometheusrule.yaml"));
    assertThat(rule).contains(PoolGauges.PANIC).contains(TransitionReporter.REFUSED);
  }

  private static Path root() {
    for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
      if (Files.isRegularFile(p.resolve("operator/pom.xml"))) {
        return p;
      }
    }
    throw new IllegalStateException("no repository root above " + Path.of("").toAbsolutePath());
  }
}
