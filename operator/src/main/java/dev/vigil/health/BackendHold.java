package dev.vigil.health;

import java.util.Objects;

/**
 * What the admin state and the agent make of one backend, before and beside its health verdict
 * (docs/decision.md, "Admin state and the agent"). Pure; {@link #of} is the whole precedence rule:
 *
 * <ol>
 *   <li>admin {@code maint}, then admin {@code drain}: an operator's explicit word wins over all;
 *   <li>agent {@code maint}, then agent {@code drain}: the backend takes itself out;
 *   <li>agent {@code down}: the backend is not available whatever its checks say, but it is still a
 *       decided backend (it counts toward panic like a Down one; it is not an ejection, so the cap
 *       does not apply);
 *   <li>otherwise the health verdict alone (checks, ejection, damping, panic).
 * </ol>
 *
 * A held backend ({@code kind} other than NONE) is never ready, not even in panic, and leaves the
 * panic and cap denominators, like a terminating Pod. {@code agentDown} still applies under a hold:
 * a drained backend whose agent says down is published {@code serving=false}.
 *
 * @param kind NONE, DRAIN or MAINT
 * @param source who set the hold ({@code admin} or {@code agent}), or empty without a hold
 * @param agentDown the agent reports the backend down
 * @param reason the agent's reason when the agent decides anything, else empty
 */
public record BackendHold(Kind kind, String source, boolean agentDown, String reason) {
  /** Whether, and how, a backend is held out of the ready set. */
  public enum Kind {
    NONE,
    DRAIN,
    MAINT
  }

  public static final BackendHold NONE = new BackendHold(Kind.NONE, "", false, "");

  public BackendHold {
    Objects.requireNonNull(kind, "kind");
    source = source == null ? "" : source;
    reason = reason == null ? "" : reason;
  }

  /** The precedence rule (see the class comment). */
  public static BackendHold of(AdminState admin, AgentState agent) {
    boolean down = agent.op() == AgentState.Op.DOWN;
    if (admin == AdminState.MAINT) {
      return new BackendHold(Kind.MAINT, "admin", down, down ? agent.reason() : "");
    }
    if (admin == AdminState.DRAIN) {
      return new BackendHold(Kind.DRAIN, "admin", down, down ? agent.reason() : "");
    }
    return switch (agent.admin()) {
      case MAINT -> new BackendHold(Kind.MAINT, "agent", down, agent.reason());
      case DRAIN -> new BackendHold(Kind.DRAIN, "agent", down, agent.reason());
      case READY -> down ? new BackendHold(Kind.NONE, "", true, agent.reason()) : BackendHold.NONE;
    };
  }

  /** Held out of the ready set and the panic and cap denominators. */
  public boolean held() {
    return kind != Kind.NONE;
  }
}
