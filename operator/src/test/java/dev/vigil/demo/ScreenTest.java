package dev.vigil.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.EventBuilder;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The live view's terminal handling, from what it writes. */
class ScreenTest {
  @Test
  void drawsOnTheAlternateScreenWithoutEverClearingIt() throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
    AtomicInteger frames = new AtomicInteger();
    Screen screen = new Screen(out, () -> "frame " + frames.incrementAndGet() + "\nsecond\n");

    screen.start();
    while (frames.get() < 3) {
      Thread.sleep(20);
    }
    screen.stop();

    String written = bytes.toString(StandardCharsets.UTF_8);
    assertThat(written).startsWith(Screen.ENTER).endsWith(Screen.LEAVE);
    assertThat(written).doesNotContain("\033[2J").doesNotContain("\033[3J");
    String inside =
        written.substring(Screen.ENTER.length(), written.length() - Screen.LEAVE.length());
    assertThat(inside.split("\033\\[H", -1)).hasSizeGreaterThanOrEqualTo(3);
    assertThat(inside).contains("frame 1\033[K\r\nsecond\033[K\033[J");
  }

  @Test
  void aFrameEndsOnItsLastLineSoTheScreenNeverScrolls() {
    String frame = Screen.frame("a\nb\nc\n");
    assertThat(frame).isEqualTo("\033[Ha\033[K\r\nb\033[K\r\nc\033[K\033[J");
    assertThat(frame.chars().filter(c -> c == '\n').count()).isEqualTo(2);
  }

  @Test
  void eventsAreInTimeOrderNotInTextOrder() {
    List<Event> events =
        new ArrayList<>(
            List.of(
                event("b", "2026-12-01T09:00:04Z", "7"),
                event("a", "2026-12-01T09:00:04.120Z", "9"),
                event("c", "2026-12-01T09:00:03.999Z", "10"),
                event("d", "2026-12-01T09:00:04Z", "10")));

    ClusterReads.inTimeOrder(events);

    assertThat(events)
        .extracting(e -> e.getMetadata().getName())
        .containsExactly("c", "b", "d", "a");
  }

  private static Event event(String name, String last, String resourceVersion) {
    return new EventBuilder()
        .withNewMetadata()
        .withName(name)
        .withResourceVersion(resourceVersion)
        .endMetadata()
        .withLastTimestamp(last)
        .build();
  }

  @Test
  void theLocaleDecidesUtf8AsPosixDoes() {
    assertThat(Terminal.utf8(Map.of())).isFalse();
    assertThat(Terminal.utf8(Map.of("LANG", "en_US.UTF-8"))).isTrue();
    assertThat(Terminal.utf8(Map.of("LANG", "en_US.UTF-8", "LC_ALL", "C"))).isFalse();
    assertThat(Terminal.utf8(Map.of("LC_ALL", "", "LC_CTYPE", "C.utf8"))).isTrue();
    assertThat(new Terminal(80, 24, false).dot()).isEqualTo(" | ");
  }
}
