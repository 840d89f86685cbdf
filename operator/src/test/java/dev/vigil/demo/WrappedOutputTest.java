package dev.vigil.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The demo's plain output fits 80 columns: long lines break at spaces, under their text. */
class WrappedOutputTest {
  @Test
  void aLongStampedLineBreaksAtSpacesUnderItsText() {
    String line =
        "  12.3s  outcome reporter: the demo's proxy, authenticated as"
            + " system:serviceaccount:shop:reporter (TokenReview, SubjectAccessReview answered"
            + " by the embedded API server), POSTs over TLS to";
    List<String> wrapped = WrappedOutput.wrap(line, 80);
    assertThat(wrapped).allMatch(l -> l.length() <= 80);
    assertThat(wrapped).hasSizeGreaterThan(1);
    assertThat(wrapped.get(0)).startsWith("  12.3s  outcome reporter: the demo");
    assertThat(wrapped.subList(1, wrapped.size())).allMatch(l -> l.startsWith("         "));
    assertThat(String.join(" ", wrapped).replaceAll(" +", " "))
        .isEqualTo(line.replaceAll(" +", " "));
  }

  @Test
  void shortLinesAndTablesStayAsTheyAre() {
    assertThat(WrappedOutput.wrap("NAME  POLICY  AVAILABLE", 80))
        .containsExactly("NAME  POLICY  AVAILABLE");
    assertThat(WrappedOutput.wrap("", 80)).containsExactly("");
  }

  @Test
  void aWordLongerThanALineIsCut() {
    List<String> wrapped = WrappedOutput.wrap("x".repeat(200), 80);
    assertThat(wrapped).allMatch(l -> l.length() <= 80);
    assertThat(String.join("", wrapped).replace(" ", "")).isEqualTo("x".repeat(200));
  }

  @Test
  void aPrintStreamThroughItNeverPrintsALinePast80Columns() {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream out = WrappedOutput.of(new PrintStream(bytes, true, StandardCharsets.UTF_8), 80);
    out.println("  interval 2.00s -> 200ms, " + "timeout 1.00s -> 150ms, ".repeat(6));
    out.println("short");
    out.flush();
    List<String> lines = bytes.toString(StandardCharsets.UTF_8).lines().toList();
    assertThat(lines).allMatch(l -> l.length() <= 80).contains("short");
    assertThat(lines.get(1)).startsWith("    ");
  }
}
