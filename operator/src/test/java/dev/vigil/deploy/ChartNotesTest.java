package dev.vigil.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ChartNotesTest {

  @Test
  void tellsTheUserWhatToRunNext() {
    String notes = VigilChart.locate().installNotes();

    assertThat(notes)
        .contains("kubectl -n vigil-system rollout status deployment/vigil")
        .contains("kubectl apply -f examples/web.yaml")
        .contains("kubectl -n shop get healthpolicy,backendpool")
        .contains("kubectl -n shop describe backendpool web")
        .contains("--clusterrole=vigil-outcome-reporter")
        .contains("port-forward service/vigil 8080")
        .contains("Replicas: 2, sharded")
        .contains("kubectl get bp -A -o wide")
        .doesNotContain("<no value>");
  }
}
