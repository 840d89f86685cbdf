package dev.vigil.probe;

import dev.vigil.health.AgentState;
import java.util.Locale;

/**
 * One answer of a backend's agent, HAProxy's agent-check protocol: a line of words separated by
 * spaces, tabs or commas, in any order; {@code up}; {@code down}, {@code failed} or {@code stopped}
 * (all three down, as in HAProxy); {@code ready}, {@code drain}, {@code maint}; a weight {@code
 * N%}; text after {@code #} is the reason. Words Vigil does not use ({@code maxconn:N}) are
 * skipped. A weight of {@code 0%} is {@code drain}, any other weight {@code ready} (EndpointSlices
 * carry no weights).
 *
 * @param admin the administrative word, or null when the reply names none
 * @param op the operational word, or null when the reply names none
 * @param reason the text after {@code #}, trimmed, or empty
 * @param detail for status: what was read, or why nothing usable was ({@code timeout}, {@code no
 *     words understood})
 */
public record AgentReply(AgentState.Admin admin, AgentState.Op op, String reason, String detail) {

  /** Longest reply line read; the rest is dropped (HAProxy's agent reads a short buffer too). */
  public static final int MAX_LINE = 256;

  /** A reply that changes nothing: no answer, or nothing understood. */
  public static AgentReply nothing(String detail) {
    return new AgentReply(null, null, "", detail);
  }

  /** Whether the reply says anything Vigil uses. */
  public boolean understood() {
    return admin != null || op != null;
  }

  /** {@code state} changed by this reply (unchanged when it says nothing). */
  public AgentState applyTo(AgentState state) {
    return understood() ? state.after(admin, op, reason) : state;
  }

  /** Parses one reply line (without its line end); never throws. */
  public static AgentReply parse(String line) {
    String words = line;
    String reason = "";
    int hash = line.indexOf('#');
    if (hash >= 0) {
      words = line.substring(0, hash);
      reason = printable(line.substring(hash + 1).trim());
    }
    AgentState.Admin admin = null;
    AgentState.Op op = null;
    for (String w : words.split("[ \t,]+")) {
      String word = w.toLowerCase(Locale.ROOT);
      switch (word) {
        case "up" -> op = AgentState.Op.UP;
        case "down", "failed", "stopped" -> op = AgentState.Op.DOWN;
        case "ready" -> admin = AgentState.Admin.READY;
        case "drain" -> admin = AgentState.Admin.DRAIN;
        case "maint" -> admin = AgentState.Admin.MAINT;
        default -> {
          Integer weight = weight(word);
          if (weight != null) {
            admin = weight == 0 ? AgentState.Admin.DRAIN : AgentState.Admin.READY;
          }
        }
      }
    }
    String shown = printable(line.trim());
    if (admin == null && op == null) {
      return nothing(shown.isEmpty() ? "empty reply" : "no words understood: '" + shown + "'");
    }
    return new AgentReply(admin, op, reason, "'" + shown + "'");
  }

  /** {@code N%} with 0 <= N <= 256 (HAProxy's weight range), else null. */
  private static Integer weight(String word) {
    if (word.length() < 2 || word.length() > 4 || !word.endsWith("%")) {
      return null;
    }
    String digits = word.substring(0, word.length() - 1);
    for (int i = 0; i < digits.length(); i++) {
      if (!Character.isDigit(digits.charAt(i))) {
        return null;
      }
    }
    int n = Integer.parseInt(digits);
    return n <= 256 ? n : null;
  }

  /** Control characters replaced, so a hostile agent cannot forge log lines or status text. */
  private static String printable(String s) {
    StringBuilder out = new StringBuilder(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      out.append(c < 0x20 || c == 0x7f ? '?' : c);
    }
    return out.toString();
  }
}
