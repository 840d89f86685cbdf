package dev.vigil;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The command line sits on top: {@code dev.vigil.cli} depends on every command, and no command, nor
 * the operator's wiring in {@code dev.vigil}, depends on it; the demo starts the operator through
 * {@code Vigil.start}, so {@code dev.vigil} never reaches into the demo (issue 34's cycle).
 */
class PackageDependencyTest {
  private static final Path MAIN = Path.of("src/main/java/dev/vigil");

  @Test
  void theOperatorsWiringImportsNeitherTheCommandLineNorTheDemo() throws IOException {
    List<Path> top = javaFiles(MAIN, 1);
    assertThat(top).hasSizeGreaterThan(5);
    Pattern upward = Pattern.compile("\\bdev\\.vigil\\.(cli|demo|replay|inspect)\\.");
    for (Path file : top) {
      assertThat(upward.matcher(Files.readString(file)).find())
          .as("%s reaches a command above it", file)
          .isFalse();
    }
  }

  @Test
  void noPackageButTheCommandLineImportsIt() throws IOException {
    Pattern cli = Pattern.compile("\\bdev\\.vigil\\.cli\\b");
    for (Path file : javaFiles(MAIN, Integer.MAX_VALUE)) {
      if (!file.startsWith(MAIN.resolve("cli"))) {
        assertThat(cli.matcher(Files.readString(file)).find()).as("%s uses cli", file).isFalse();
      }
    }
  }

  private static List<Path> javaFiles(Path dir, int depth) throws IOException {
    try (Stream<Path> walk = Files.walk(dir, depth)) {
      return walk.filter(p -> p.toString().endsWith(".java")).toList();
    }
  }
}
