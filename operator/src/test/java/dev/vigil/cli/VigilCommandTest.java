package dev.vigil.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** {@code vigil}'s command line: help and version exit 0, nothing starts without a command. */
class VigilCommandTest {
  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();
  private final List<String> started = new ArrayList<>();

  private int run(String... args) throws Exception {
    out.reset();
    err.reset();
    return VigilCommand.run(
        List.of(args),
        new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8),
        name ->
            rest -> {
              started.add(name + " " + rest);
              return 0;
            });
  }

  private String out() {
    return out.toString(StandardCharsets.UTF_8);
  }

  private String err() {
    return err.toString(StandardCharsets.UTF_8);
  }

  /** Help is read on a terminal of 80 columns: no line of any command's help is wider. */
  @Test
  void everyHelpFitsEightyColumns() {
    List<String> texts = new ArrayList<>(List.of(VigilCommand.usage()));
    for (String command : VigilCommand.COMMANDS) {
      texts.add(VigilCommand.usage(command));
    }
    for (String text : texts) {
      assertThat(text.lines().filter(l -> l.length() > 80).toList()).as(text).isEmpty();
    }
  }

  @Test
  void helpInEverySpellingPrintsTheCommandsAndExitsZero() throws Exception {
    for (String help : List.of("help", "--help", "-h")) {
      assertThat(run(help)).as(help).isZero();
      assertThat(out()).as(help).contains("usage: vigil <command>");
      for (String command : VigilCommand.COMMANDS) {
        assertThat(out()).as(help).contains("  " + command + " ");
      }
      assertThat(err()).isEmpty();
    }
    assertThat(started).isEmpty();
  }

  @Test
  void everySubcommandsHelpExitsZeroAndStartsNothing() throws Exception {
    for (String command : VigilCommand.COMMANDS) {
      for (String help : List.of("--help", "-h")) {
        assertThat(run(command, help)).as(command + " " + help).isZero();
        assertThat(out()).as(command).startsWith("usage: vigil " + command);
      }
      assertThat(run("help", command)).isZero();
      assertThat(out()).startsWith("usage: vigil " + command);
    }
    assertThat(run("demo", "--speed", "5", "--help")).isZero();
    assertThat(started).isEmpty();
  }

  @Test
  void noCommandPrintsHelpAndStartsNothing() throws Exception {
    assertThat(run()).isEqualTo(VigilCommand.USAGE);
    assertThat(err()).contains("usage: vigil <command>").contains("starts nothing");
    assertThat(started).isEmpty();
  }

  @Test
  void anUnknownCommandIsNamed() throws Exception {
    assertThat(run("opertor")).isEqualTo(VigilCommand.USAGE);
    assertThat(err()).startsWith("vigil: unknown command 'opertor'\n");
    assertThat(run("help", "nope")).isEqualTo(VigilCommand.USAGE);
    assertThat(started).isEmpty();
  }

  @Test
  void versionIsTheBuildsVersion() throws Exception {
    String pomVersion = projectVersion();
    for (String v : List.of("--version", "version")) {
      assertThat(run(v)).isZero();
      assertThat(out()).isEqualTo("vigil " + pomVersion + "\n");
    }
  }

  @Test
  void aCommandGetsTheRestOfTheArguments() throws Exception {
    assertThat(run("replay", "--rise", "2")).isZero();
    assertThat(run("operator")).isZero();
    assertThat(started).containsExactly("replay [--rise, 2]", "operator []");
  }

  /** The parent pom's version, which Maven filters into version.properties. */
  private static String projectVersion() throws Exception {
    Path root = Path.of("").toAbsolutePath();
    while (!Files.isRegularFile(root.resolve("operator/pom.xml"))) {
      root = root.getParent();
    }
    String pom = Files.readString(root.resolve("pom.xml"));
    Matcher m =
        Pattern.compile("<artifactId>vigil-parent</artifactId>\\s*<version>([^<]+)</version>")
            .matcher(pom);
    assertThat(m.find()).as("the parent pom's version").isTrue();
    return m.group(1);
  }
}
