package dev.vigil.ops;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.vigil.api.Conditions;
import dev.vigil.cli.VigilCommand;
import dev.vigil.publish.PublishingGuard;
import dev.vigil.publish.SlicePublisher;
import dev.vigil.publish.TransitionReporter;
import dev.vigil.shard.CheckerGauges;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The README and docs/metrics.md name what the code has: commands, fields, reasons, metrics. */
class DocsTest {
  private static final Path ROOT = root();

  @Test
  void setUpHasExactlyTheDemoAndTheBuildCommand() throws IOException {
    String readme = Files.readString(ROOT.resolve("README.md"));
    String setUp = readme.substring(readme.indexOf("## Set up"));
    setUp = setUp.substring(setUp.indexOf("```") + 3);
    setUp = setUp.substring(setUp.indexOf('\n') + 1, setUp.indexOf("```"));
    List<String> commands =
        setUp.lines().filter(l -> !l.isBlank()).map(l -> l.replaceAll("\\s+#.*", "")).toList();
    assertThat(commands).containsExactly("./vigil demo", "mvn -B verify");
  }

  @Test
  void troubleshootingCoversEveryReadyReason() throws IOException {
    String readme = Files.readString(ROOT.resolve("README.md"));
    for (String reason :
        List.of(
            Conditions.POLICY_NOT_FOUND,
            Conditions.INVALID_POLICY,
            Conditions.NO_BACKENDS,
            Conditions.SERVICE_HAS_SELECTOR,
            Conditions.FOREIGN_ENDPOINT_SLICES,
            Conditions.SERVICE_CONFLICT,
            PublishingGuard.SERVICE_NOT_FOUND,
            Conditions.PUBLISH_FAILED)) {
      assertThat(readme).contains("| `" + reason + "` |");
    }
  }

  @Test
  void everyHealthPolicyFieldIsInTheReadmeTable() throws IOException {
    String readme = Files.readString(ROOT.resolve("README.md"));
    JsonNode crd =
        new ObjectMapper(new YAMLFactory())
            .readTree(ROOT.resolve("crds/healthpolicies.vigil.dev-v1.yml").toFile());
    JsonNode spec = crd.at("/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties");
    List<String> fields = new ArrayList<>();
    for (Iterator<Map.Entry<String, JsonNode>> it = spec.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> top = it.next();
      JsonNode props = top.getValue().get("properties");
      if (props == null) {
        fields.add(top.getKey());
      } else {
        props.fieldNames().forEachRemaining(f -> fields.add(top.getKey() + "." + f));
      }
    }
    assertThat(fields).hasSizeGreaterThan(20);
    for (String field : fields) {
      String last = field.substring(field.lastIndexOf('.') + 1);
      assertThat(readme)
          .as(field)
          .containsAnyOf("`" + field + "`", "`" + field + ".", "." + last + "`");
    }
  }

  @Test
  void metricsDocNamesEveryMetricTheCodeRegisters() throws IOException {
    String doc = Files.readString(ROOT.resolve("docs/metrics.md"));
    for (String name :
        List.of(
            MeteredProber.PROBES + "_total",
            MeteredProber.DURATION + "_seconds",
            PoolGauges.BACKENDS,
            PoolGauges.AVAILABLE,
            PoolGauges.PANIC,
            PoolGauges.EJECTED,
            PoolGauges.DAMPED,
            PoolGauges.LANES,
            PoolGauges.DEFERRED + "_total",
            MeteredWriteCounter.WRITES + "_total",
            SlicePublisher.PUBLISH_SECONDS,
            SlicePublisher.PUBLISH_FAILURES,
            TransitionReporter.TRANSITIONS,
            TransitionReporter.EJECTIONS,
            TransitionReporter.UNEJECTIONS,
            TransitionReporter.REFUSED,
            TransitionReporter.DRY_RUN,
            TransitionReporter.PANIC_TRANSITIONS,
            TransitionReporter.DAMPINGS,
            TransitionReporter.RELEASES,
            CheckerGauges.FAILING_SHARE,
            CheckerGauges.SUSPECT)) {
      assertThat(doc).contains("| `" + name + "` |");
    }
    assertThat(doc).contains("at most " + PoolGauges.MAX_EJECTED_PER_POOL + " per pool");
  }

  @Test
  void thePrometheusRuleUsesMetricsThatExist() throws IOException {
    String rule = Files.readString(ROOT.resolve("deploy/helm/vigil/templates/prometheusrule.yaml"));
    assertThat(rule)
        .contains(PoolGauges.PANIC)
        .contains(TransitionReporter.REFUSED)
        .contains(CheckerGauges.SUSPECT);
  }

  /** Every {@code vigil} command line the README and docs show runs a command that exists. */
  @Test
  void everyCommandLineShownNamesACommandAndFlagsItTakes() throws Exception {
    Pattern invocation =
        Pattern.compile(
            "(?:vigil-operator\\.jar|^\\.\\.\\.|^\\$? ?\\./vigil|kubectl vigil)\\s+([a-z-]+)([^#`]*)");
    int checked = 0;
    for (Path doc : docs()) {
      for (String line : Files.readAllLines(doc)) {
        Matcher m = invocation.matcher(line.strip());
        if (!m.find()) {
          continue;
        }
        String command = m.group(1);
        if (command.startsWith("-")) {
          assertThat(List.of("--help", "-h", "--version")).as(doc + ": " + line).contains(command);
          continue;
        }
        assertThat(VigilCommand.COMMANDS).as(doc + ": " + line).contains(command);
        String usage = VigilCommand.usage(command);
        Matcher flag = FLAG.matcher(m.group(2));
        while (flag.find()) {
          // the flag as a whole word: followed by a space or the end of its help line
          assertThat(usage).as(doc + ": " + line).containsPattern(wholeFlag(flag.group()));
          checked++;
        }
      }
    }
    assertThat(checked).isGreaterThan(10);
  }

  @Test
  void theReadmesCommandsRunAndExitZero() throws Exception {
    String readme = Files.readString(ROOT.resolve("README.md"));
    String block = readme.substring(readme.indexOf("## Commands"));
    block = block.substring(block.indexOf("```") + 3);
    block = block.substring(block.indexOf('\n') + 1, block.indexOf("```"));
    List<String> lines = block.lines().filter(l -> !l.isBlank()).toList();
    assertThat(lines).hasSizeGreaterThanOrEqualTo(3);
    for (String line : lines) {
      String args =
          line.replaceAll("\\s+#.*", "")
              .replace("java -jar " + JAR, "")
              .replaceFirst("^\\./vigil ", "")
              .strip();
      int code =
          VigilCommand.run(
              List.of(args.split(" ")),
              new PrintStream(OutputStream.nullOutputStream()),
              new PrintStream(OutputStream.nullOutputStream()),
              NOTHING_STARTS);
      assertThat(code).as(line).isZero();
    }
  }

  @Test
  void theReadmeNamesEveryDemoAndReplayFlag() throws IOException {
    String readme = Files.readString(ROOT.resolve("README.md"));
    for (String command : List.of("demo", "replay")) {
      Matcher flag = FLAG.matcher(VigilCommand.usage(command));
      while (flag.find()) {
        if (!flag.group().equals("--help")) {
          assertThat(readme).as(command + " " + flag.group()).contains(flag.group());
        }
      }
    }
    String replayFlags = readme.substring(readme.indexOf("Flags: `--rise`"));
    replayFlags = replayFlags.substring(0, replayFlags.indexOf("\n\n"));
    Matcher flag = Pattern.compile("`(--[a-z-]+)`").matcher(replayFlags);
    while (flag.find()) {
      assertThat(VigilCommand.usage("replay")).containsPattern(wholeFlag(flag.group(1)));
    }
  }

  private static String wholeFlag(String flag) {
    return Pattern.quote(flag) + "(?![a-z-])";
  }

  @Test
  void theConfigurationTableHasExactlyTheOperatorsFlags() throws IOException {
    String doc = Files.readString(ROOT.resolve("docs/metrics.md"));
    List<String> fromUsage = new ArrayList<>();
    Matcher m =
        Pattern.compile("(?m)^\\s+(--[a-z-]+) .*VIGIL_").matcher(VigilCommand.usage("operator"));
    while (m.find()) {
      fromUsage.add(m.group(1));
    }
    List<String> fromDoc = new ArrayList<>();
    Matcher row = Pattern.compile("(?m)^\\| `(--[a-z-]+)` \\| `VIGIL_").matcher(doc);
    while (row.find()) {
      fromDoc.add(row.group(1));
    }
    assertThat(fromUsage).hasSizeGreaterThan(8);
    assertThat(fromDoc).containsExactlyInAnyOrderElementsOf(fromUsage);
  }

  private static final String JAR = "operator/target/vigil-operator.jar";
  private static final Pattern FLAG = Pattern.compile("--[a-z][a-z-]*");

  private static final Function<String, VigilCommand.Subcommand> NOTHING_STARTS =
      name ->
          args -> {
            throw new AssertionError("started " + name);
          };

  private static List<Path> docs() throws IOException {
    List<Path> docs = new ArrayList<>(List.of(ROOT.resolve("README.md")));
    try (var files = Files.list(ROOT.resolve("docs"))) {
      files.filter(f -> f.toString().endsWith(".md")).sorted().forEach(docs::add);
    }
    return docs;
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
