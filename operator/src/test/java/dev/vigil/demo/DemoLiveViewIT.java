package dev.vigil.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The demo's live view as a terminal receives it, captured from a short scenario on an 80x24
 * terminal with a C locale: the alternate screen, no clearing, every frame within 80x24 and ASCII,
 * the most important rows first, Events in time order.
 */
class DemoLiveViewIT {
  private static final Pattern ANSI = Pattern.compile("\033\\[[0-9;?]*[A-Za-z]");
  private static final Pattern EVENT_AT = Pattern.compile("^\\s*(\\d+\\.\\d)s  (Normal|Warning) ");

  @Test
  void everyFrameFitsTheTerminalAndLeavesNothingInScrollback() {
    ByteArrayOutputStream buffer = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(buffer, true, StandardCharsets.UTF_8);
    DemoOptions options = new DemoOptions(12, "down", 120_000, 4, true, true);

    DemoCommand.Result result = DemoCommand.run(options, out, new Terminal(80, 24, false));

    String written = buffer.toString(StandardCharsets.UTF_8);
    assertThat(result.exitCode()).as(result.unmet()).isZero();
    int enter = written.indexOf(Screen.ENTER);
    int leave = written.indexOf(Screen.LEAVE);
    assertThat(enter).isNotNegative();
    assertThat(leave).isGreaterThan(enter);
    assertThat(written.indexOf(Screen.ENTER, enter + 1)).isNegative();
    assertThat(written).doesNotContain("\033[2J").doesNotContain("\033[3J");

    String live = written.substring(enter + Screen.ENTER.length(), leave);
    List<String> frames = new ArrayList<>(List.of(live.split("\033\\[H")));
    frames.removeIf(String::isEmpty);
    assertThat(frames).hasSizeGreaterThan(3);
    for (String frame : frames) {
      String plain = ANSI.matcher(frame).replaceAll("");
      List<String> lines = List.of(plain.split("\r\n", -1));
      assertThat(lines).as(plain).hasSizeLessThanOrEqualTo(24);
      assertThat(lines).as(plain).allSatisfy(l -> assertThat(l.length()).isLessThanOrEqualTo(80));
      assertThat(plain.chars().allMatch(c -> c < 128)).as(plain).isTrue();
      assertThat(lines.get(0)).startsWith("Vigil demo | scenario down");
      assertThat(lines.get(1)).startsWith("NAME");
      assertThat(lines.get(3)).startsWith("EndpointSlice ready set");
      assertThat(lines.get(4)).startsWith("BACKEND");
      double last = -1;
      for (String line : lines) {
        Matcher m = EVENT_AT.matcher(line);
        if (m.find()) {
          double at = Double.parseDouble(m.group(1));
          assertThat(at).as("events in time order:\n" + plain).isGreaterThanOrEqualTo(last);
          last = at;
        }
      }
    }
    // Whether Events show within this short run depends on timing; their order is pinned by
    // ScreenTest.eventsAreInTimeOrderNotInTextOrder.
  }
}
