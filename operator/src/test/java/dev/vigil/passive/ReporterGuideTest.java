package dev.vigil.passive;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.health.HealthSettings;
import dev.vigil.runtime.PoolKey;
import dev.vigil.security.Fabric8Reviewer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Vertx;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The two reporters of docs/reporters.md, run as printed against the intake on loopback. */
class ReporterGuideTest {
  private static final String TOKEN = "reporter-token";

  private Vertx vertx;
  private IntakeHarness harness;

  @BeforeEach
  void setUp() {
    vertx = Vertx.vertx();
    harness =
        new IntakeHarness(
            vertx, new SimpleMeterRegistry(), IntakeLimits.defaults(), System::currentTimeMillis);
    harness.pool(new PoolKey("shop", "web"), 3, HealthSettings.defaults());
    harness.reviewer.user(TOKEN, "system:serviceaccount:shop:reporter", "shop");
  }

  @AfterEach
  void tearDown() {
    harness.close();
    IntakeHarness.await(vertx.close());
  }

  @Test
  void theShellReporterIsAccepted() throws Exception {
    String out = run(List.of("sh", "-c", snippet("## A reporter in shell", "```sh")));
    assertThat(out).contains("\"accepted\":2").contains("\"rejected\":0");
  }

  @Test
  void thePythonReporterIsAccepted() throws Exception {
    String out = run(List.of("python3", "-c", snippet("## A reporter in Python", "```python")));
    assertThat(out).contains("'accepted': 2").contains("'rejected': 0");
  }

  private String run(List<String> command) throws Exception {
    ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
    pb.environment().put("VIGIL_URL", "https://localhost:" + harness.port);
    pb.environment().put("VIGIL_CA", dev.vigil.testing.TestTls.caFile().toString());
    pb.environment().put("VIGIL_TOKEN", TOKEN);
    pb.environment().put("NAMESPACE", "shop");
    pb.environment().put("POOL", "web");
    pb.environment().put("BACKEND", IntakeHarness.ip(0) + ":8080");
    Process p = pb.start();
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.exitValue()).as(out).isZero();
    return out;
  }

  /**
   * Every {@code kubectl create token} in the guide asks for the intake's audience: without it the
   * token is the API server's, and the intake answers 401.
   */
  @Test
  void everyTokenTheGuideMintsIsForTheIntakesAudience() throws Exception {
    String doc = Files.readString(root().resolve("docs/reporters.md"));
    java.util.regex.Matcher m =
        java.util.regex.Pattern.compile("kubectl [^`\\n]*create token[^`\\n]*").matcher(doc);
    int found = 0;
    while (m.find()) {
      found++;
      assertThat(m.group())
          .as("docs/reporters.md: " + m.group())
          .contains("--audience " + Fabric8Reviewer.DEFAULT_AUDIENCE);
    }
    assertThat(found).isPositive();
  }

  private static Path root() {
    Path root = Path.of("").toAbsolutePath();
    while (!Files.isRegularFile(root.resolve("operator/pom.xml"))) {
      root = root.getParent();
    }
    return root;
  }

  /** The first code block of that fence after that heading. */
  private static String snippet(String heading, String fence) throws Exception {
    Path root = Path.of("").toAbsolutePath();
    while (!Files.isRegularFile(root.resolve("operator/pom.xml"))) {
      root = root.getParent();
    }
    String doc = Files.readString(root.resolve("docs/reporters.md"));
    int at = doc.indexOf(heading);
    assertThat(at).as(heading).isNotNegative();
    int start = doc.indexOf(fence + "\n", at) + fence.length() + 1;
    return doc.substring(start, doc.indexOf("```", start));
  }
}
