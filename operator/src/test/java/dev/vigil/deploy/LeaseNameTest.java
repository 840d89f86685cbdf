package dev.vigil.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigil.OperatorConfig;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * One leader Lease everywhere (issue 36): the chart's default install, the plain manifests, the OLM
 * bundle and the binary started by hand with no flag all name the same Lease in the same namespace,
 * so a hand-started replica waits behind an installed one instead of leading beside it and writing
 * the same slices.
 */
class LeaseNameTest {
  private static final VigilChart CHART = VigilChart.locate();

  @Test
  void theChartTheManifestsTheBundleAndTheBinaryShareOneLease() throws IOException {
    // the README's laptop path: no flag but the outcome port off (it needs certificates)
    OperatorConfig byHand = OperatorConfig.parse(List.of("--outcome-port", "-1"), Map.of());
    OperatorConfig chart = parse(container(CHART.render("").one(Deployment.class)));
    String manifests = Files.readString(CHART.repoRoot().resolve(PlainManifest.PATH));
    OperatorConfig plain = parse(container(RenderedChart.parse(manifests).one(Deployment.class)));
    OperatorConfig olm = parse(olmContainer());

    for (OperatorConfig installed : List.of(chart, plain, olm)) {
      assertThat(installed.leader().election()).isTrue();
      assertThat(installed.leader().leaseName()).isEqualTo(byHand.leader().leaseName());
    }
    // outside a cluster the binary's Lease namespace is the one the docs install into
    assertThat(byHand.leader().election()).isTrue();
    assertThat(byHand.leader().leaseNamespace()).isEqualTo(VigilChart.NAMESPACE);
    assertThat(chart.leader().leaseNamespace()).isEqualTo(VigilChart.NAMESPACE);
    assertThat(plain.leader().leaseNamespace()).isEqualTo(VigilChart.NAMESPACE);
  }

  private static Container container(Deployment d) {
    return d.getSpec().getTemplate().getSpec().getContainers().stream()
        .filter(c -> "operator".equals(c.getName()))
        .findFirst()
        .orElseThrow();
  }

  /** The CSV's Deployment: OLM runs it in the namespace of the OperatorGroup. */
  private static Container olmContainer() throws IOException {
    JsonNode csv = OlmBundle.read(Files.readString(CHART.repoRoot().resolve(OlmBundle.CSV)));
    JsonNode container = null;
    for (JsonNode c : csv.at("/spec/install/spec/deployments/0/spec/template/spec/containers")) {
      if ("operator".equals(c.path("name").asText())) {
        container = c;
      }
    }
    assertThat(container).as("the operator container in %s", OlmBundle.CSV).isNotNull();
    List<String> args = new ArrayList<>();
    container.path("args").forEach(a -> args.add(a.asText()));
    List<EnvVar> env = new ArrayList<>();
    for (JsonNode e : container.path("env")) {
      env.add(
          new EnvVar(
              e.path("name").asText(),
              e.has("value") ? e.path("value").asText() : null,
              e.has("valueFrom")
                  ? new io.fabric8.kubernetes.api.model.EnvVarSourceBuilder()
                      .withNewFieldRef()
                      .withFieldPath(e.at("/valueFrom/fieldRef/fieldPath").asText())
                      .endFieldRef()
                      .build()
                  : null));
    }
    Container c = new Container();
    c.setArgs(args);
    c.setEnv(env);
    return c;
  }

  private static OperatorConfig parse(Container c) {
    assertThat(c.getArgs().get(0)).isEqualTo("operator");
    return ChartOperatorConfigTest.parse(c);
  }
}
