package dev.vigil.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.vigil.OperatorConfig;
import dev.vigil.testing.Fixtures;
import dev.vigil.testing.TestTls;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.api.model.apps.DeploymentSpec;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBuilder;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.RoleBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The OLM bundle's install strategy on the real API server, laid out as OLM lays it for an
 * OperatorGroup that targets the operator's own namespace: the CSV's {@code permissions} as a Role
 * and RoleBinding there, its {@code clusterPermissions} as a ClusterRole and ClusterRoleBinding.
 * The operator runs in-process as that ServiceAccount (leader election on, the Lease in that
 * namespace) and publishes a pool with no request refused; the CSV's Deployment passes the API
 * server's validation (a server-side dry run).
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class OlmBundleE2E {
  private static final int PORT = 8080;
  private static final String CSV = "deploy/olm/manifests/vigil.clusterserviceversion.yaml";

  private static E2eCluster cluster;
  private static JsonNode install;

  @BeforeAll
  static void bundle() throws IOException {
    cluster = E2eCluster.get();
    cluster.applyCrds();
    install =
        new ObjectMapper(new YAMLFactory())
            .readTree(cluster.path(CSV).toFile())
            .at("/spec/install/spec");
  }

  @Test
  void theBundlesPermissionsRunTheOperatorInItsOwnNamespace() {
    KubernetesClient admin = cluster.admin();
    String ns = cluster.freshNamespace("olm");
    String sa = install.at("/permissions/0/serviceAccountName").asText();
    assertThat(install.at("/clusterPermissions/0/serviceAccountName").asText()).isEqualTo(sa);
    cluster.serviceAccount(ns, sa);
    admin
        .rbac()
        .roles()
        .inNamespace(ns)
        .resource(
            new RoleBuilder()
                .withNewMetadata()
                .withName("vigil-olm")
                .endMetadata()
                .withRules(rules(install.at("/permissions/0/rules")))
                .build())
        .create();
    cluster.bindRole(ns, "vigil-olm", "Role", "vigil-olm", sa);
    String clusterRole = "vigil-olm-" + ns;
    admin
        .rbac()
        .clusterRoles()
        .resource(
            new ClusterRoleBuilder()
                .withNewMetadata()
                .withName(clusterRole)
                .endMetadata()
                .withRules(rules(install.at("/clusterPermissions/0/rules")))
                .build())
        .create();
    cluster.bindClusterRole(clusterRole, clusterRole, ns, sa);

    // OLM creates this Deployment; the API server accepts it (the downward API path of
    // olm.targetNamespaces included).
    DeploymentSpec spec =
        new ObjectMapper().convertValue(install.at("/deployments/0/spec"), DeploymentSpec.class);
    Deployment deployment =
        new DeploymentBuilder()
            .withNewMetadata()
            .withName(install.at("/deployments/0/name").asText())
            .endMetadata()
            .withSpec(spec)
            .build();
    admin.apps().deployments().inNamespace(ns).resource(deployment).dryRun().create();

    OperatorLog log = OperatorLog.attach();
    OperatorConfig config =
        OperatorConfig.embedded(
            "--namespaces=" + ns,
            "--leader-election=true",
            "--lease-name=vigil",
            "--lease-namespace=" + ns,
            "--status-interval-ms=200",
            "--tls-cert-file=" + TestTls.certFile(),
            "--tls-key-file=" + TestTls.keyFile());
    try (TestHosts hosts = new TestHosts(cluster, PORT);
        InProcessOperator operator = InProcessOperator.startAs(cluster, ns, sa, config)) {
      admin.resource(Fixtures.policy(ns, "fast", "500ms", "300ms")).create();
      for (int h : new int[] {1, 2}) {
        hosts.start(h);
        cluster.createRunningPod(ns, "web-" + h, "web", TestHosts.address(h));
      }
      admin.resource(Fixtures.pool(ns, "web", "fast", "web", PORT)).create();

      new PublishedSlices(admin, ns, "web").awaitReady(Duration.ofSeconds(60), 1, 2);
      await()
          .atMost(Duration.ofSeconds(30))
          .untilAsserted(
              () -> {
                Lease lease = admin.leases().inNamespace(ns).withName("vigil").get();
                assertThat(lease).isNotNull();
                assertThat(lease.getSpec().getHolderIdentity()).isNotBlank();
              });
    } finally {
      log.detach();
    }
    assertThat(log.forbidden()).as("requests the bundle's permissions refused").isEmpty();
  }

  private static List<PolicyRule> rules(JsonNode rules) {
    assertThat(rules).isNotEmpty();
    List<PolicyRule> parsed = new ArrayList<>();
    ObjectMapper json = new ObjectMapper();
    rules.forEach(r -> parsed.add(json.convertValue(r, PolicyRule.class)));
    return parsed;
  }
}
