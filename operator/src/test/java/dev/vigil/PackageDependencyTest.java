package dev.vigil;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The command line sits on top: {@code dev.vigil.cli} depends on every command, and no command, nor
 * the operator's wiring in {@code dev.vigil}, depends on it; the demo starts the operator through
 * {@code Vigil.start}, so {@code dev.vigil} never reaches into the demo (issue 34's cycle). No two
 * packages depend on each other, directly or around a loop; {@code probe}'s subpackages ({@code
 * http}, {@code tcp}, {@code grpc}, {@code transport}) build on {@code probe}, never the reverse.
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

  @Test
  void theProbeCoreImportsNoneOfItsSubpackages() throws IOException {
    Map<String, Set<String>> uses = packageUses();
    assertThat(uses.get("dev.vigil.probe.http"))
        .as("probe.http uses probe")
        .contains("dev.vigil.probe");
    assertThat(uses.get("dev.vigil.probe"))
        .as("what dev.vigil.probe uses")
        .noneMatch(q -> q.startsWith("dev.vigil.probe."));
  }

  @Test
  void noTwoPackagesReachEachOther() throws IOException {
    Map<String, Set<String>> uses = packageUses();
    assertThat(uses).hasSizeGreaterThan(15);
    Map<String, Set<String>> reach = new TreeMap<>();
    uses.keySet().forEach(p -> reach.put(p, reachable(p, uses)));
    List<String> cycles = new ArrayList<>();
    reach.forEach(
        (p, reached) ->
            reached.stream()
                .filter(q -> p.compareTo(q) < 0 && reach.getOrDefault(q, Set.of()).contains(p))
                .forEach(q -> cycles.add(p + " <-> " + q)));
    assertThat(cycles).as("packages in a cycle").isEmpty();
  }

  /**
   * Package to the other {@code dev.vigil} packages its main sources name, by import or by full
   * name; comments are left out, so a Javadoc link is no dependency.
   */
  private static Map<String, Set<String>> packageUses() throws IOException {
    Pattern named = Pattern.compile("\\b(dev\\.vigil(?:\\.[a-z][a-z0-9]*)*)\\.[A-Z]");
    Pattern comments = Pattern.compile("(?s)/\\*.*?\\*/|//[^\\n]*");
    Map<String, Set<String>> uses = new TreeMap<>();
    for (Path file : javaFiles(MAIN, Integer.MAX_VALUE)) {
      String own =
          MAIN.getParent().getParent().relativize(file.getParent()).toString().replace('/', '.');
      Set<String> used = uses.computeIfAbsent(own, k -> new TreeSet<>());
      Matcher m = named.matcher(comments.matcher(Files.readString(file)).replaceAll(""));
      while (m.find()) {
        if (!m.group(1).equals(own)) {
          used.add(m.group(1));
        }
      }
    }
    return uses;
  }

  private static Set<String> reachable(String from, Map<String, Set<String>> uses) {
    Set<String> seen = new HashSet<>();
    Deque<String> todo = new ArrayDeque<>(uses.getOrDefault(from, Set.of()));
    while (!todo.isEmpty()) {
      String p = todo.pop();
      if (seen.add(p)) {
        todo.addAll(uses.getOrDefault(p, Set.of()));
      }
    }
    return seen;
  }

  private static List<Path> javaFiles(Path dir, int depth) throws IOException {
    try (Stream<Path> walk = Files.walk(dir, depth)) {
      return walk.filter(p -> p.toString().endsWith(".java")).toList();
    }
  }
}
