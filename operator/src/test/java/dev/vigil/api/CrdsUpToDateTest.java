package dev.vigil.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The CRDs committed under crds/ must equal what the build generates from dev.vigil.api.
 *
 * <p>Refresh them after changing the API classes with {@value GeneratedCrds#REFRESH_COMMAND}, or
 * let this test copy them: {@code mvn -B -pl operator test -Dtest=CrdsUpToDateTest
 * -Dvigil.crds.update=true}.
 */
class CrdsUpToDateTest {

  @Test
  void committedCrdsEqualGeneratedCrds() throws IOException {
    Path generated = GeneratedCrds.generatedDirectory();
    Path committed = GeneratedCrds.committedDirectory();
    if (Boolean.getBoolean("vigil.crds.update")) {
      copy(generated, committed);
    }

    Set<String> generatedNames = ymlFiles(generated);
    assertThat(generatedNames)
        .as("CRDs the build generates")
        .containsExactlyInAnyOrderElementsOf(
            PrinterColumnOrder.KINDS.stream().map(PrinterColumnOrder::fileName).toList());

    List<String> problems = new ArrayList<>();
    Set<String> committedNames = Files.isDirectory(committed) ? ymlFiles(committed) : Set.of();
    for (String name : generatedNames) {
      if (!committedNames.contains(name)) {
        problems.add("missing: crds/" + name);
      } else if (!Files.readString(generated.resolve(name))
          .equals(Files.readString(committed.resolve(name)))) {
        problems.add("stale: crds/" + name);
      }
    }
    for (String name : committedNames) {
      if (!generatedNames.contains(name)) {
        problems.add("not generated any more: crds/" + name);
      }
    }
    if (!problems.isEmpty()) {
      fail(
          "crds/ differs from the CRDs generated from dev.vigil.api (%s). Refresh them with:%n  %s%n"
              + "or: mvn -B -pl operator test -Dtest=CrdsUpToDateTest -Dvigil.crds.update=true",
          String.join(", ", problems), GeneratedCrds.REFRESH_COMMAND);
    }
  }

  private static Set<String> ymlFiles(Path dir) throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      return files
          .map(file -> file.getFileName().toString())
          .filter(name -> name.endsWith(".yml"))
          .collect(Collectors.toCollection(TreeSet::new));
    }
  }

  private static void copy(Path from, Path to) throws IOException {
    Files.createDirectories(to);
    for (String name : ymlFiles(to)) {
      Files.delete(to.resolve(name));
    }
    for (String name : ymlFiles(from)) {
      Files.copy(from.resolve(name), to.resolve(name), StandardCopyOption.REPLACE_EXISTING);
    }
  }
}
