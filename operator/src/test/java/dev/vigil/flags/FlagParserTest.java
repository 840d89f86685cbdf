package dev.vigil.flags;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigil.flags.FlagParser.Kind;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class FlagParserTest {
  private static final Map<String, Kind> FLAGS = new LinkedHashMap<>();

  static {
    FLAGS.put("speed", Kind.VALUE);
    FLAGS.put("port", Kind.VALUE);
    FLAGS.put("plain", Kind.SWITCH);
  }

  private final FlagParser parser = FlagParser.listingKnownFlags(FLAGS);

  @Test
  void readsValuesGivenWithAnEqualsSignOrAsTheNextArgument() {
    assertThat(parser.parse(List.of("--speed=10", "--port", "-1")))
        .containsExactly(Map.entry("speed", "10"), Map.entry("port", "-1"));
  }

  @Test
  void aValueMayItselfHoldAnEqualsSignOrBeEmpty() {
    assertThat(parser.parse(List.of("--speed=a=b", "--port=")))
        .containsExactly(Map.entry("speed", "a=b"), Map.entry("port", ""));
  }

  @Test
  void aSwitchAloneIsTrueAndTakesAValueThatFollows() {
    assertThat(parser.parse(List.of("--plain", "--speed", "2"))).containsEntry("plain", "true");
    assertThat(parser.parse(List.of("--speed", "2", "--plain"))).containsEntry("plain", "true");
    assertThat(parser.parse(List.of("--plain", "false"))).containsEntry("plain", "false");
    assertThat(parser.parse(List.of("--plain=no"))).containsEntry("plain", "no");
  }

  @Test
  void theLastOfAFlagGivenTwiceWins() {
    assertThat(parser.parse(List.of("--speed", "1", "--speed=3"))).containsEntry("speed", "3");
  }

  @Test
  void aValueFlagWithoutItsValueIsRefusedByName() {
    assertThatThrownBy(() -> parser.parse(List.of("--speed")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("--speed needs a value");
    assertThatThrownBy(() -> parser.parse(List.of("--speed", "--plain")))
        .hasMessage("--speed needs a value");
  }

  @Test
  void anUnknownFlagIsNamedWithTheKnownOnesInTheirOrder() {
    assertThatThrownBy(() -> parser.parse(List.of("--sped", "2")))
        .hasMessage("unknown flag --sped; known: --speed, --port, --plain");
    assertThatThrownBy(() -> parser.parse(List.of("--sped=2")))
        .hasMessage("unknown flag --sped; known: --speed, --port, --plain");
    assertThatThrownBy(() -> FlagParser.namingOnlyTheUnknownFlag(FLAGS).parse(List.of("--sped")))
        .hasMessage("unknown flag --sped");
  }

  @Test
  void anArgumentThatIsNoFlagIsRefused() {
    assertThatThrownBy(() -> parser.parse(List.of("shop"))).hasMessage("unexpected argument: shop");
    assertThatThrownBy(() -> parser.parse(List.of("--plain", "false", "--speed", "1", "x")))
        .hasMessage("unexpected argument: x");
  }

  @Test
  void aSwitchValueIsTrueOrFalseInAnyCase() {
    assertThat(FlagParser.bool("plain", "TRUE")).isTrue();
    assertThat(FlagParser.bool("plain", "false")).isFalse();
    assertThatThrownBy(() -> FlagParser.bool("plain", "yes"))
        .hasMessage("--plain must be true or false, got yes");
  }
}
