package dev.vigil.health;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** The decision core stays pure: no Kubernetes client and no Vert.x (docs/design.md §2, STYLE). */
class HealthPackagePurityTest {
  private static final Path SOURCES = Path.of("src/main/java/dev/vigil/health");
  private static final Pattern FORBIDDEN = Pattern.compile("\\bio\\.(fabric8|vertx)\\b");

  @Test
  void noClassInTheHealthPackageUsesFabric8OrVertx() throws IOException {
    assertThat(SOURCES).isDirectory();
    List<Path> files;
    try (Stream<Path> walk = Files.walk(SOURCES)) {
      files = walk.filter(p -> p.toString().endsWith(".java")).collect(Collectors.toList());
    }
    assertThat(files).hasSizeGreaterThan(5);
    for (Path file : files) {
      String source = Files.readString(file);
      assertThat(FORBIDDEN.matcher(source).find())
          .as("%s mentions io.fabric8 or io.vertx", file)
          .isFalse();
    }
  }
}
