package dev.vigil.ops;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every "docs/design.md §n" that a source file cites names a section docs/design.md has: a heading
 * ({@code ## 3. Publishing}, {@code ### 2.1 Flap damping}) or a bold item ({@code **§2.4 The cap}).
 */
class DesignCitationsTest {
  private static final Path ROOT = root();

  /** A citation, possibly wrapped across Javadoc lines ("docs/design.md\n * §1"). */
  private static final Pattern CITATION =
      Pattern.compile("docs/design\\.md(?:\\s*\\*)?\\s*§(\\d+(?:\\.\\d+)?)");

  private static final Pattern HEADING =
      Pattern.compile("(?m)^#{2,3} (\\d+(?:\\.\\d+)?)[.: ]|\\*\\*§(\\d+(?:\\.\\d+)?) ");

  @Test
  void everyCitedSectionExists() throws IOException {
    Set<String> sections = sections(Files.readString(ROOT.resolve("docs/design.md")));
    assertThat(sections).contains("1", "2", "2.1", "2.2", "2.8", "3", "4", "5", "6", "7");
    List<String> citations = new ArrayList<>();
    List<String> dangling = new ArrayList<>();
    try (Stream<Path> files = Files.walk(ROOT.resolve("operator/src"))) {
      for (Path file : files.filter(p -> p.toString().endsWith(".java")).toList()) {
        Matcher m = CITATION.matcher(read(file));
        while (m.find()) {
          String where = ROOT.relativize(file) + ": §" + m.group(1);
          citations.add(where);
          if (!sections.contains(m.group(1))) {
            dangling.add(where);
          }
        }
      }
    }
    assertThat(citations).as("citations found").hasSizeGreaterThan(80);
    assertThat(dangling).as("citations of sections docs/design.md does not have").isEmpty();
  }

  static Set<String> sections(String design) {
    Set<String> out = new TreeSet<>();
    Matcher m = HEADING.matcher(design);
    while (m.find()) {
      out.add(m.group(1) != null ? m.group(1) : m.group(2));
    }
    return out;
  }

  private static String read(Path file) {
    try {
      return Files.readString(file);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static Path root() {
    for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
      if (Files.isRegularFile(p.resolve("operator/pom.xml"))) {
        return p;
      }
    }
    throw new IllegalStateException("no repository root above " + Path.of("").toAbsolutePath());
  }
}
