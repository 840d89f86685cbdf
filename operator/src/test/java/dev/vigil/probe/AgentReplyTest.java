package dev.vigil.probe;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.health.AgentState;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** HAProxy's agent reply words, as docs/checks.md lists them. */
class AgentReplyTest {

  @ParameterizedTest(name = "''{0}'' -> admin {1}, op {2}, reason ''{3}''")
  @CsvSource(
      delimiter = '|',
      value = {
        "up                         | ''    | UP   | ''",
        "ready                      | READY | ''   | ''",
        "drain                      | DRAIN | ''   | ''",
        "maint                      | MAINT | ''   | ''",
        "down                       | ''    | DOWN | ''",
        "failed#disk full           | ''    | DOWN | disk full",
        "stopped # deploying        | ''    | DOWN | deploying",
        "UP, Ready                  | READY | UP   | ''",
        "75%                        | READY | ''   | ''",
        "0%                         | DRAIN | ''   | ''",
        "up 0% maxconn:10           | DRAIN | UP   | ''",
        "drain\tdown,#overloaded    | DRAIN | DOWN | overloaded",
        "ready up maint             | MAINT | UP   | ''",
      })
  void wordsInAnyOrderSeparatedBySpacesTabsOrCommas(
      String line, String admin, String op, String reason) {
    AgentReply r = AgentReply.parse(line.replace("\\t", "\t"));
    assertThat(r.understood()).isTrue();
    assertThat(r.admin()).isEqualTo(admin.isEmpty() ? null : AgentState.Admin.valueOf(admin));
    assertThat(r.op()).isEqualTo(op.isEmpty() ? null : AgentState.Op.valueOf(op));
    assertThat(r.reason()).isEqualTo(reason);
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {"''", "hello world", "300%", "-5%", "%", "maxconn:10", "#drain"})
  void aLineWithoutAKnownWordSaysNothing(String line) {
    AgentReply r = AgentReply.parse(line);
    assertThat(r.understood()).isFalse();
    AgentState s = AgentState.NONE.after(AgentState.Admin.DRAIN, null, "x");
    assertThat(r.applyTo(s)).isEqualTo(s);
  }

  @ParameterizedTest
  @CsvSource({"'down#a\u0001b', 'a?b'"})
  void controlCharactersNeverReachTheReason(String line, String reason) {
    assertThat(AgentReply.parse(line).reason()).isEqualTo(reason);
  }
}
