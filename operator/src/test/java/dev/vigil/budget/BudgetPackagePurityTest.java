package dev.vigil.budget;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** The probe budget stays pure: no Kubernetes client, no Vert.x (docs/design.md §9, STYLE). */
class BudgetPackagePurityTest {
  private static final Path SOURCES = Path.of("src/main/java/dev/vigil/budget");
  private static final Pattern FORBIDDEN = Pattern.compile("\\bio\\.(fabric8|vertx)\\b");

  @Test
  void noClassInTheBudgetPackageUsesFabric8OrVertx() throws IOException {
    List<Path> files;
    try (Stream<Path> walk = Files.walk(SOURCES)) {
      files = walk.filter(p -> p.toString().endsWith(".java")).toList();
    }
    assertThat(files).hasSizeGreaterThan(5);
    for (Path file : files) {
      assertThat(FORBIDDEN.matcher(Files.readString(file)).find())
          .as("%s mentions io.fabric8 or io.vertx", file)
          .isFalse();
    }
  }
}
