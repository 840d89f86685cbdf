package dev.vigil.security;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Token and access reviews live in one place (docs/design.md §4, issue 34 item 4): the outcome
 * intake takes them from {@code security}, not from {@code ops}, and {@code security} depends on
 * neither of the ports that use it.
 */
class SecurityBoundaryTest {
  private static final Path MAIN = Path.of("src/main/java/dev/vigil");

  @Test
  void thePassivePackageDoesNotImportOps() throws IOException {
    assertNoneMention("passive", Pattern.compile("\\bdev\\.vigil\\.ops\\b"));
  }

  @Test
  void theSecurityPackageDependsOnNeitherPortNorTheRuntime() throws IOException {
    assertNoneMention(
        "security", Pattern.compile("\\bdev\\.vigil\\.(ops|passive|runtime|reconcile|publish)\\b"));
  }

  private static void assertNoneMention(String pkg, Pattern forbidden) throws IOException {
    List<Path> files;
    try (Stream<Path> walk = Files.walk(MAIN.resolve(pkg))) {
      files = walk.filter(p -> p.toString().endsWith(".java")).collect(Collectors.toList());
    }
    assertThat(files).hasSizeGreaterThan(4);
    for (Path file : files) {
      assertThat(forbidden.matcher(Files.readString(file)).find())
          .as("%s mentions %s", file, forbidden.pattern())
          .isFalse();
    }
  }
}
