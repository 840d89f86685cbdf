package dev.vigil.health;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigil.health.AgentState.Admin;
import dev.vigil.health.AgentState.Op;
import dev.vigil.health.BackendHold.Kind;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The precedence table of docs/decision.md, "Admin state and the agent", row by row. */
class BackendHoldTest {

  @ParameterizedTest(name = "admin {0}, agent {1}/{2} -> {3} by {4}, agent down {5}")
  @CsvSource({
    // admin, agent admin, agent op, hold,  source, agentDown
    "UP,    READY, UP,   NONE,  '',    false",
    "UP,    READY, DOWN, NONE,  '',    true",
    "UP,    DRAIN, UP,   DRAIN, agent, false",
    "UP,    DRAIN, DOWN, DRAIN, agent, true",
    "UP,    MAINT, UP,   MAINT, agent, false",
    "UP,    MAINT, DOWN, MAINT, agent, true",
    "DRAIN, READY, UP,   DRAIN, admin, false",
    "DRAIN, READY, DOWN, DRAIN, admin, true",
    "DRAIN, MAINT, UP,   DRAIN, admin, false",
    "DRAIN, DRAIN, UP,   DRAIN, admin, false",
    "MAINT, READY, UP,   MAINT, admin, false",
    "MAINT, DRAIN, UP,   MAINT, admin, false",
    "MAINT, MAINT, DOWN, MAINT, admin, true",
  })
  void adminBeatsAgentMaintBeatsDrainAndAgentDownAlwaysShows(
      AdminState admin, Admin agentAdmin, Op agentOp, Kind hold, String source, boolean down) {
    BackendHold h = BackendHold.of(admin, new AgentState(agentAdmin, agentOp, "why"));
    assertThat(h.kind()).isEqualTo(hold);
    assertThat(h.source()).isEqualTo(source);
    assertThat(h.agentDown()).isEqualTo(down);
    assertThat(h.held()).isEqualTo(hold != Kind.NONE);
  }

  @Test
  void noAdminStateAndNoAgentHoldsNothing() {
    assertThat(BackendHold.of(AdminState.UP, AgentState.NONE)).isEqualTo(BackendHold.NONE);
  }

  @Test
  void anAgentReplyChangesOnlyThePartsItNames() {
    AgentState drained = AgentState.NONE.after(Admin.DRAIN, null, "overloaded");
    AgentState up = drained.after(null, Op.UP, "");
    assertThat(up.admin()).isEqualTo(Admin.DRAIN); // HAProxy: up does not lift the agent's drain
    assertThat(up.after(Admin.READY, null, "").admin()).isEqualTo(Admin.READY);
  }

  @Test
  void adminStateWordsParseAndABadOneNamesTheField() {
    assertThat(AdminState.parse("f", " Drain ")).isEqualTo(AdminState.DRAIN);
    assertThat(AdminState.parse("f", "ready")).isEqualTo(AdminState.UP);
    assertThat(AdminState.parse("f", "maint")).isEqualTo(AdminState.MAINT);
    assertThatThrownBy(() -> AdminState.parse("annotation vigil.dev/admin-state", "off"))
        .hasMessageContaining("annotation vigil.dev/admin-state")
        .hasMessageContaining("'off'")
        .hasMessageContaining("drain, maint, up or ready");
    assertThat(AdminState.DRAIN.strictest(AdminState.MAINT)).isEqualTo(AdminState.MAINT);
    assertThat(AdminState.MAINT.strictest(AdminState.UP)).isEqualTo(AdminState.MAINT);
  }
}
