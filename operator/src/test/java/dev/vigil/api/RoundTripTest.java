package dev.vigil.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.api.v1alpha1.BackendState;
import dev.vigil.api.v1alpha1.HealthPolicy;
import dev.vigil.api.v1alpha1.PortProtocol;
import dev.vigil.api.v1alpha1.Protocol;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import org.junit.jupiter.api.Test;

/** A resource with every field set survives YAML to Java to YAML unchanged. */
class RoundTripTest {

  static final String FULL_HEALTH_POLICY =
      """
      apiVersion: vigil.dev/v1alpha1
      kind: HealthPolicy
      metadata:
        name: api
        namespace: shop
        generation: 3
      spec:
        active:
          protocol: HTTPS
          port: 8443
          interval: 1s
          timeout: 750ms
          maxInterval: 30s
          quietMinRequests: 20
          jitterPercent: 20
          rise: 3
          fall: 2
          reuseConnection: true
          http:
            method: POST
            path: /ready?deep=1
            host: api.shop.internal
            headers:
              - name: X-Probe
                value: vigil
            expectedStatuses: ["200", "204-299"]
            bodyMatch: '"status":\\s*"ok"'
            body: '{"deep":true}'
            headerMatch:
              - name: X-Ready
                value: ^yes$
              - name: X-Build
            failFastStatuses: ["500-599", "429"]
            version: "2"
          tcp:
            send: PING
            expect: PONG
          grpc:
            service: shop.Cart
            watch: true
          tls:
            insecureSkipVerify: true
            serverName: api.shop.internal
        passive:
          enforce: false
          consecutiveErrors: 7
          consecutiveLocalOriginErrors: 9
          splitLocalOrigin: false
          baseEjectionTime: 15s
          maxEjectionTime: 2m
          maxEjectionPercent: 25
          alwaysEjectOne: true
          sweepInterval: 5s
          unejectOnActivePass: true
          windowFailures: 4
          failureWindow: 30s
          successRate:
            minimumHosts: 3
            requestVolume: 40
            stdevFactor: 1.5
            enforce: false
          failurePercentage:
            threshold: 70
            minimumHosts: 4
            requestVolume: 30
            enforce: true
          latency:
            factor: 2.5
            minimumSamples: 10
            floor: 150ms
            enforce: false
        quorum:
          confirmers: 3
          downPercent: 66
          timeout: 20s
        panicThresholdPercent: 40
        panicExitPercent: 60
      status:
        observedGeneration: 3
        conditions:
          - type: Accepted
            status: "False"
            reason: InvalidPolicy
            message: "spec.active.http.bodyMatch: unclosed group"
            lastTransitionTime: "2026-11-29T17:00:00Z"
            observedGeneration: 3
        pools: 2
        backends: 30
        available: 27
        panicking: 0
        availability: 27/30
      """;

  static final String FULL_BACKEND_POOL =
      """
      apiVersion: vigil.dev/v1alpha1
      kind: BackendPool
      metadata:
        name: web
        namespace: shop
      spec:
        policyRef:
          name: web
        selector:
          matchLabels:
            app: web
          matchExpressions:
            - key: track
              operator: In
              values: [stable, canary]
        ports:
          - name: http
            port: 80
            targetPort: http
            protocol: TCP
          - name: metrics
            port: 9090
            targetPort: 9090
            protocol: UDP
        service:
          name: web-vigil
          manage: false
        maxEndpointsPerSlice: 50
        respectPodReadiness: false
      status:
        observedGeneration: 4
        policy: web
        total: 3
        available: 1
        down: 1
        ejected: 1
        panic: false
        availability: 1/3
        conditions:
          - type: Ready
            status: "True"
            reason: Published
            message: 1 of 3 backends available
            lastTransitionTime: "2026-11-29T17:00:00Z"
          - type: Degraded
            status: "True"
            reason: BackendsUnavailable
            message: 1 down, 1 ejected
            lastTransitionTime: "2026-11-29T17:01:00Z"
        backends:
          - pod: web-7d9f-abcde
            address: 10.0.0.12
            state: Ejected
            available: false
            since: "2026-11-29T17:01:00Z"
            ejections: 2
            ejectedUntil: "2026-11-29T17:02:00Z"
            lastProbe:
              at: "2026-11-29T17:01:30Z"
              ok: true
              latencyMs: 4
              detail: ok
            reason: 5 consecutive errors
          - pod: web-7d9f-fghij
            address: 10.0.0.13
            state: Down
            available: false
            since: "2026-11-29T17:00:40Z"
            ejections: 0
            lastProbe:
              at: "2026-11-29T17:01:31Z"
              ok: false
              latencyMs: 2000
              detail: timeout
            reason: "would eject: failure percentage 90 above 70 (dry run)"
          - pod: web-7d9f-klmno
            address: 10.0.0.14
            state: Up
            available: true
            since: "2026-11-29T16:00:00Z"
            ejections: 0
      """;

  /** Fails on any field the classes do not know, so a typo in the API cannot hide. */
  private final ObjectMapper strictYaml =
      new ObjectMapper(new YAMLFactory())
          .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, true);

  private final KubernetesSerialization serialization = new KubernetesSerialization();

  @Test
  void fullHealthPolicyRoundTripsWithoutLosingAField() throws Exception {
    HealthPolicy policy = strictYaml.readValue(FULL_HEALTH_POLICY, HealthPolicy.class);

    assertThat(policy.getSpec().getActive().getProtocol()).isEqualTo(Protocol.HTTPS);
    assertThat(policy.getSpec().getActive().getPort().getIntVal()).isEqualTo(8443);
    assertThat(policy.getSpec().getActive().getHttp().getExpectedStatuses())
        .containsExactly("200", "204-299");
    assertThat(policy.getSpec().getPassive().getLatency().getFloor()).isEqualTo("150ms");
    assertThat(policy.getSpec().effectivePanicExitPercent()).isEqualTo(60);
    assertThat(policy.getStatus().getConditions().get(0).getReason())
        .isEqualTo(Conditions.INVALID_POLICY);

    assertSameTree(FULL_HEALTH_POLICY, serialization.asYaml(policy));
    HealthPolicy again = serialization.unmarshal(serialization.asYaml(policy), HealthPolicy.class);
    assertSameTree(FULL_HEALTH_POLICY, serialization.asJson(again));
  }

  @Test
  void fullBackendPoolRoundTripsWithoutLosingAField() throws Exception {
    BackendPool pool = strictYaml.readValue(FULL_BACKEND_POOL, BackendPool.class);

    assertThat(pool.getSpec().getPorts().get(0).getTargetPort().getStrVal()).isEqualTo("http");
    assertThat(pool.getSpec().getPorts().get(1).getTargetPort().getIntVal()).isEqualTo(9090);
    assertThat(pool.getSpec().getPorts().get(1).getProtocol()).isEqualTo(PortProtocol.UDP);
    assertThat(pool.getSpec().getSelector().getMatchLabels()).containsEntry("app", "web");
    assertThat(pool.getStatus().getBackends())
        .extracting(backend -> backend.getState())
        .containsExactly(BackendState.EJECTED, BackendState.DOWN, BackendState.UP);
    assertThat(pool.getStatus().getBackends().get(0).getLastProbe().getLatencyMs()).isEqualTo(4L);

    assertSameTree(FULL_BACKEND_POOL, serialization.asYaml(pool));
    BackendPool again = serialization.unmarshal(serialization.asYaml(pool), BackendPool.class);
    assertSameTree(FULL_BACKEND_POOL, serialization.asJson(again));
  }

  @Test
  void absentOptionalFieldsStayAbsent() {
    BackendPool pool = new BackendPool();
    String yaml = serialization.asYaml(pool);
    assertThat(yaml).doesNotContain("null").doesNotContain("policyRef").doesNotContain("status");
    HealthPolicy policy = new HealthPolicy();
    assertThat(serialization.asYaml(policy))
        .doesNotContain("null")
        .doesNotContain("http:")
        .doesNotContain("successRate")
        .doesNotContain("quorum")
        .doesNotContain("panicExitPercent")
        .contains("interval: \"5s\"");
  }

  @Test
  void backendStatesUseTheirKubernetesNames() {
    assertThat(serialization.asJson(BackendState.DRAINING)).isEqualTo("\"Draining\"");
    assertThat(serialization.unmarshal("\"Unknown\"", BackendState.class))
        .isEqualTo(BackendState.UNKNOWN);
  }

  private void assertSameTree(String expectedYaml, String actual) {
    assertThat(normalized(actual)).isEqualTo(normalized(expectedYaml));
  }

  /** YAML or JSON to a tree whose numbers compare by value. */
  private JsonNode normalized(String text) {
    JsonNode tree = serialization.unmarshal(text, JsonNode.class);
    return serialization.unmarshal(serialization.asJson(tree), JsonNode.class);
  }
}
