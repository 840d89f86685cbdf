package dev.vigil.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The outcome port's TLS (self-signed by the chart, from cert-manager, or an existing Secret),
 * mounted so that rotation reaches the operator, and the NetworkPolicy's openings.
 */
class ChartTlsTest {
  private static final VigilChart CHART = VigilChart.locate();

  private static Container operator(RenderedChart chart) {
    return chart.one(Deployment.class).getSpec().getTemplate().getSpec().getContainers().get(0);
  }

  private static Map<String, String> env(Container c) {
    return c.getEnv().stream()
        .filter(e -> e.getValue() != null)
        .collect(Collectors.toMap(EnvVar::getName, EnvVar::getValue));
  }

  @Test
  void byDefaultCreatesACaAndAServingCertificateForTheServiceAndMountsThem() throws Exception {
    RenderedChart chart = CHART.render("");
    Secret tls = chart.require(Secret.class, "vigil-tls");
    assertThat(tls.getType()).isEqualTo("kubernetes.io/tls");
    CertificateFactory x509 = CertificateFactory.getInstance("X.509");
    X509Certificate serving =
        (X509Certificate)
            x509.generateCertificate(
                new ByteArrayInputStream(Base64.getDecoder().decode(tls.getData().get("tls.crt"))));
    X509Certificate ca =
        (X509Certificate)
            x509.generateCertificate(
                new ByteArrayInputStream(
                    chart
                        .require(ConfigMap.class, "vigil-ca")
                        .getData()
                        .get("ca.crt")
                        .getBytes(StandardCharsets.US_ASCII)));
    serving.verify(ca.getPublicKey());
    assertThat(serving.getSubjectAlternativeNames().stream().map(n -> String.valueOf(n.get(1))))
        .contains("vigil.vigil-system.svc", "vigil.vigil-system.svc.cluster.local");

    Container c = operator(chart);
    assertThat(env(c))
        .containsEntry("VIGIL_TLS_CERT_FILE", "/var/run/vigil/tls/tls.crt")
        .containsEntry("VIGIL_TLS_KEY_FILE", "/var/run/vigil/tls/tls.key")
        .containsEntry("VIGIL_OUTCOME_TOKEN_AUDIENCE", "vigil.dev");
    assertThat(c.getVolumeMounts())
        .filteredOn(m -> m.getName().equals("tls"))
        .singleElement()
        .satisfies(
            m -> {
              assertThat(m.getMountPath()).isEqualTo("/var/run/vigil/tls");
              assertThat(m.getSubPath()).as("a subPath mount never sees a rotation").isNull();
            });
    List<Volume> volumes =
        chart.one(Deployment.class).getSpec().getTemplate().getSpec().getVolumes();
    assertThat(volumes)
        .filteredOn(v -> v.getName().equals("tls"))
        .singleElement()
        .satisfies(v -> assertThat(v.getSecret().getSecretName()).isEqualTo("vigil-tls"));
  }

  @Test
  void aClientCaConfigMapIsMountedWholeAndNamedToTheOperatorOnlyWhenSet() {
    Container none = operator(CHART.render(""));
    assertThat(env(none)).doesNotContainKey("VIGIL_INTAKE_CLIENT_CA");
    assertThat(none.getVolumeMounts()).noneMatch(m -> m.getName().equals("client-ca"));

    RenderedChart chart =
        CHART.render("outcomes: {clientCA: {configMap: exporters-ca, key: bundle.pem}}");
    Container c = operator(chart);
    assertThat(env(c))
        .containsEntry("VIGIL_INTAKE_CLIENT_CA", "/var/run/vigil/client-ca/bundle.pem");
    assertThat(ChartOperatorConfigTest.parse(c).intake().clientCaFile())
        .isEqualTo("/var/run/vigil/client-ca/bundle.pem");
    assertThat(c.getVolumeMounts())
        .filteredOn(m -> m.getName().equals("client-ca"))
        .singleElement()
        .satisfies(
            m -> {
              assertThat(m.getMountPath()).isEqualTo("/var/run/vigil/client-ca");
              assertThat(m.getSubPath()).as("a subPath mount never sees an update").isNull();
            });
    assertThat(chart.one(Deployment.class).getSpec().getTemplate().getSpec().getVolumes())
        .filteredOn(v -> v.getName().equals("client-ca"))
        .singleElement()
        .satisfies(v -> assertThat(v.getConfigMap().getName()).isEqualTo("exporters-ca"));
  }

  @Test
  void anExistingSecretIsUsedAsIsAndNothingIsGenerated() {
    RenderedChart chart =
        CHART.render("outcomes: {tls: {mode: secret, secretName: my-tls}, tokenAudience: x.io}");
    assertThat(chart.all(Secret.class)).isEmpty();
    assertThat(chart.one(Deployment.class).getSpec().getTemplate().getSpec().getVolumes())
        .filteredOn(v -> v.getName().equals("tls"))
        .singleElement()
        .satisfies(v -> assertThat(v.getSecret().getSecretName()).isEqualTo("my-tls"));
    assertThat(env(operator(chart))).containsEntry("VIGIL_OUTCOME_TOKEN_AUDIENCE", "x.io");
    assertThatThrownBy(() -> CHART.render("outcomes: {tls: {mode: secret}}"))
        .hasMessageContaining("outcomes.tls.secretName is required");
  }

  @Test
  void certManagerIsAskedOnlyWhenItsCrdsExist() {
    assertThatThrownBy(
            () ->
                CHART.render(
                    "outcomes: {tls: {mode: cert-manager, certManager: {issuerRef: {name: ca}}}}"))
        .hasMessageContaining("needs cert-manager's CRDs");
  }

  @Test
  void securesMetricsByDefaultAndAValueTurnsItOff() {
    RenderedChart chart = CHART.render("serviceMonitor: {enabled: true}");
    Container c = operator(chart);
    assertThat(env(c)).containsEntry("VIGIL_METRICS_AUTH", "true");
    assertThat(c.getLivenessProbe().getHttpGet().getPort().getStrVal())
        .as("the kubelet probes the plain health port, not the TLS metrics port")
        .isEqualTo("health");
    assertThat(c.getLivenessProbe().getHttpGet().getScheme()).isNull();
    assertThat(c.getReadinessProbe().getHttpGet().getScheme()).isNull();
    String monitor = CHART.template("serviceMonitor: {enabled: true}");
    assertThat(monitor)
        .contains("scheme: https")
        .contains("bearerTokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token");

    Container open = operator(CHART.render("metrics: {secure: false}"));
    assertThat(env(open)).containsEntry("VIGIL_METRICS_AUTH", "false");
    assertThat(open.getLivenessProbe().getHttpGet().getPort().getStrVal()).isEqualTo("health");
  }

  @Test
  void emptyLabelsAndPeersOpenAPortToEverySource() {
    RenderedChart chart =
        CHART.render("networkPolicy: {outcomes: {namespaceLabels: null, from: []}}");
    NetworkPolicy policy = chart.one(NetworkPolicy.class);
    assertThat(policy.getSpec().getIngress().get(0).getFrom()).hasSize(1);
    assertThat(policy.getSpec().getIngress().get(1).getFrom()).isNullOrEmpty();
  }
}
