package dev.vigil;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The launcher {@code ./vigil}, run from a copy of the repository's layout with a {@code mvn} that
 * behaves as Maven 3.8's does (a colour reset, ESC[0m, on both streams even with -B and
 * style.color=never) and a {@code java} that says what it was asked to run.
 */
class LauncherTest {
  @TempDir Path repo;

  @Test
  void aBuildOffATerminalLeavesNoEscapeSequencesOnStandardError() throws Exception {
    Path bin = layout();
    script(
        bin.resolve("mvn"),
        "printf '\\033[0m' ; printf '\\033[0m[WARNING] slow disk\\n' >&2",
        "mkdir -p operator/target && touch operator/target/vigil-operator.jar");
    Path err = repo.resolve("err.txt");
    Process p =
        launcher(bin)
            .redirectError(err.toFile())
            .redirectOutput(repo.resolve("out.txt").toFile())
            .start();
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    String stderr = Files.readString(err, StandardCharsets.UTF_8);
    assertThat(p.exitValue()).as(stderr).isZero();
    assertThat(stderr).contains("vigil: building").contains("[WARNING] slow disk");
    assertThat(stderr).as(stderr).doesNotContain("\u001b");
    assertThat(Files.readString(repo.resolve("out.txt")))
        .contains("java -jar")
        .contains("--version");
  }

  @Test
  void aFailedBuildStillFailsThroughTheFilter() throws Exception {
    Path bin = layout();
    script(bin.resolve("mvn"), "printf '\\033[0m[ERROR] broken\\n'", "exit 3");
    Process p = launcher(bin).redirectErrorStream(true).start();
    String all = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(all).isEqualTo(1);
    assertThat(all).contains("[ERROR] broken").contains("the build failed").doesNotContain("ran");
  }

  /** {@code ./vigil --version} with the fakes first on PATH, standard input not a terminal. */
  private ProcessBuilder launcher(Path bin) {
    ProcessBuilder b =
        new ProcessBuilder(repo.resolve("vigil").toString(), "--version")
            .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
            .directory(repo.toFile());
    b.environment().put("PATH", bin + ":" + System.getenv("PATH"));
    return b;
  }

  /** The launcher and the files its staleness check reads; a fake java; returns the bin dir. */
  private Path layout() throws Exception {
    Path root = Path.of("").toAbsolutePath();
    while (!Files.isRegularFile(root.resolve("vigil"))) {
      root = root.getParent();
    }
    Files.copy(root.resolve("vigil"), repo.resolve("vigil"));
    executable(repo.resolve("vigil"));
    Files.writeString(repo.resolve("pom.xml"), "<project/>");
    Files.createDirectories(repo.resolve("operator/src/main"));
    Files.createDirectories(repo.resolve("crds"));
    Files.writeString(repo.resolve("operator/pom.xml"), "<project/>");
    Path bin = Files.createDirectories(repo.resolve("bin"));
    script(bin.resolve("java"), "echo \"ran java $*\"");
    return bin;
  }

  private static void script(Path file, String... lines) throws Exception {
    Files.writeString(file, "#!/usr/bin/env bash\n" + String.join("\n", lines) + "\n");
    executable(file);
  }

  private static void executable(Path file) throws Exception {
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
  }
}
