package dev.vigil.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The demo shows examples/web.yaml as written: the jar's copy is the file, only timings scale. */
class DemoExamplesTest {

  private static String repoExample() throws IOException {
    Path p = Path.of("examples/web.yaml");
    if (!Files.exists(p)) {
      p = Path.of("../examples/web.yaml");
    }
    return Files.readString(p, StandardCharsets.UTF_8);
  }

  @Test
  void theCopyInTheJarIsTheExample() throws IOException {
    try (InputStream in = getClass().getClassLoader().getResourceAsStream(DemoExamples.FILE)) {
      assertThat(in).as("operator/src/main/resources/examples/web.yaml").isNotNull();
      assertThat(new String(in.readAllBytes(), StandardCharsets.UTF_8))
          .as("operator/src/main/resources/examples/web.yaml must equal examples/web.yaml")
          .isEqualTo(repoExample());
    }
  }

  @Test
  void speedOneHalvesTheExamplesDurationsAndKeepsEverythingElse() throws IOException {
    DemoExamples ex = DemoExamples.parse(repoExample(), "test", 1);
    assertThat(ex.intervalMs()).isEqualTo(1_000);
    assertThat(ex.timeoutMs()).isEqualTo(500);
    assertThat(ex.baseEjectionMs()).isEqualTo(15_000);
    assertThat(ex.rise()).isEqualTo(2);
    assertThat(ex.fall()).isEqualTo(3);
    assertThat(ex.maxEjectionPercent()).isEqualTo(34);
    assertThat(ex.pool().getMetadata().getName()).isEqualTo("web");
    assertThat(ex.deployment().getSpec().getTemplate().getMetadata().getLabels())
        .containsEntry("app", "web");
  }

  @Test
  void dampingScalesWithTheRestAboveItsHalfLifeFloor() throws IOException {
    DemoExamples slow = DemoExamples.parse(repoExample(), "test", 1);
    assertThat(slow.damping().getHalfLife()).isEqualTo("10000ms");
    assertThat(slow.damping().getMaxSuppressTime()).isEqualTo("30000ms");
    // x0.05: the half-life reaches its 1 s floor; maxSuppressTime keeps its ratio of 3 to it
    DemoExamples fast = DemoExamples.parse(repoExample(), "test", 50);
    assertThat(fast.damping().getHalfLife()).isEqualTo("1000ms");
    assertThat(fast.damping().getMaxSuppressTime()).isEqualTo("3000ms");
  }

  @Test
  void highSpeedsStopAtTheSmallestIntervalAndKeepTheTimeoutBelowIt() throws IOException {
    DemoExamples ex = DemoExamples.parse(repoExample(), "test", 50);
    assertThat(ex.intervalMs()).isEqualTo(100);
    assertThat(ex.timeoutMs()).isBetween(1L, 99L);
  }

  @Test
  void slowSpeedsScaleTheTimeoutWithTheRestAsTheReadmeSays() throws IOException {
    // --speed 0.2: every duration x 1/(2 x 0.2) = x2.5, the timeout too (it stays below interval)
    DemoExamples ex = DemoExamples.parse(repoExample(), "test", 0.2);
    assertThat(ex.intervalMs()).isEqualTo(5_000);
    assertThat(ex.timeoutMs()).isEqualTo(2_500);
    assertThat(ex.baseEjectionMs()).isEqualTo(75_000);
  }

  @Test
  void flagsAreCheckedAndNamed() {
    assertThat(DemoOptions.parse(List.of(), false))
        .isEqualTo(new DemoOptions(6, "tour", 0, 1, false, false));
    assertThat(
            DemoOptions.parse(
                List.of(
                    "--backends", "1000", "--scenario=cap", "--speed", "10", "--duration", "2m"),
                true))
        .isEqualTo(new DemoOptions(1000, "cap", 120_000, 10, true, true));
    assertThat(DemoOptions.parse(List.of("--no-color"), true).color()).isFalse();
    assertThat(DemoOptions.parse(List.of("--no-color"), true).live()).isTrue();
    assertThat(DemoOptions.parse(List.of("--plain", "--speed", "2"), true))
        .isEqualTo(new DemoOptions(6, "tour", 0, 2, false, false));
    assertThatThrownBy(() -> DemoOptions.parse(List.of("--speed", "--plain"), false))
        .hasMessage("--speed needs a value");
    assertThatThrownBy(() -> DemoOptions.parse(List.of("--plain=maybe"), false))
        .hasMessage("--plain must be true or false, got maybe");
    assertThatThrownBy(() -> DemoOptions.parse(List.of("--backends", "1001"), false))
        .hasMessage("--backends must be a number from 3 to 1000, got 1001");
    assertThatThrownBy(() -> DemoOptions.parse(List.of("--scenario", "chaos"), false))
        .hasMessageStartingWith(
            "--scenario must be one of tour, down, flap, damping, passive, panic, cap");
    assertThatThrownBy(() -> DemoOptions.parse(List.of("--speed", "0"), false))
        .hasMessageStartingWith("--speed must be");
    assertThatThrownBy(() -> DemoOptions.parse(List.of("--frobnicate"), false))
        .hasMessage(
            "unknown flag --frobnicate; known: --backends, --scenario, --duration, --speed,"
                + " --no-color, --plain");
  }

  @Test
  void backendAddressesSpreadOver127And0AndStayValid() {
    assertThat(DemoCluster.address(0)).isEqualTo("127.0.0.10");
    assertThat(DemoCluster.address(239)).isEqualTo("127.0.0.249");
    assertThat(DemoCluster.address(240)).isEqualTo("127.0.1.10");
    assertThat(DemoCluster.address(999)).isEqualTo("127.0.4.49");
  }
}
