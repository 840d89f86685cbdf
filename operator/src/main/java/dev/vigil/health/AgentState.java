package dev.vigil.health;

import java.util.Objects;

/**
 * What a backend's agent (HAProxy's agent check) last said about itself, kept as HAProxy keeps it:
 * an administrative part ({@link Admin}: ready, drain or maint) and an operational part ({@link
 * Op}: up or down), each changed only by a reply that names it. {@link #NONE} is a backend without
 * an agent, or whose agent never answered: it holds nothing.
 *
 * @param reason the text after {@code #} of the reply that set the current state, or empty
 */
public record AgentState(Admin admin, Op op, String reason) {
  /** The agent's administrative word. */
  public enum Admin {
    READY,
    DRAIN,
    MAINT
  }

  /** The agent's operational word. */
  public enum Op {
    UP,
    DOWN
  }

  public static final AgentState NONE = new AgentState(Admin.READY, Op.UP, "");

  public AgentState {
    Objects.requireNonNull(admin, "admin");
    Objects.requireNonNull(op, "op");
    reason = reason == null ? "" : reason;
  }

  /**
   * This state changed by one reply: each part the reply names replaces this one's, the others stay
   * (HAProxy: {@code up} does not lift an agent's {@code drain}; {@code ready} does).
   *
   * @param admin the reply's administrative word, or null when it names none
   * @param op the reply's operational word, or null when it names none
   */
  public AgentState after(Admin admin, Op op, String reason) {
    return new AgentState(
        admin == null ? this.admin : admin,
        op == null ? this.op : op,
        reason == null ? "" : reason);
  }
}
