package dev.vigil.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The demo's plain lines never end in an empty list. */
class PlainPrinterTest {
  @Test
  void anEmptyReadySetSaysSoInsteadOfPrintingAnEmptyList() {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PlainPrinter printer =
        new PlainPrinter(new PrintStream(bytes, true, StandardCharsets.UTF_8), null, 0);

    printer.changed(new Observation(1_000, Map.of(), null, List.of(), null, 0));
    printer.changed(new Observation(2_000, Map.of("127.0.0.10", false), null, List.of(), null, 0));
    printer.changed(new Observation(3_000, Map.of("127.0.0.10", true), null, List.of(), null, 0));

    assertThat(bytes.toString(StandardCharsets.UTF_8).lines().toList())
        .containsExactly(
            "   1.0s  slice ready 0/0 (no endpoints yet)",
            "   2.0s  slice ready 0/1 (none)",
            "   3.0s  slice ready 1/1: 127.0.0.10");
  }
}
