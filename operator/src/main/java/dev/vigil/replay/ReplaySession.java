package dev.vigil.replay;

import dev.vigil.health.ActiveState;
import dev.vigil.health.Backend;
import dev.vigil.health.EjectionDecision;
import dev.vigil.health.HealthSettings;
import dev.vigil.health.Origin;
import dev.vigil.health.PoolHealth;
import dev.vigil.probe.ProbeResult;
import dev.vigil.probe.http.StatusLineClassifier;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.Predicate;

/**
 * One replay session: answers one line of the replay protocol at a time by driving Vigil's own
 * decision core ({@link PoolHealth}) with a clock the session sets, and classifying recorded probe
 * answers with the HTTP prober's own {@link StatusLineClassifier} (a fail-fast status,
 * docs/design.md §2.2, takes an Up backend Down at once, as in a cluster).
 *
 * <p>A malformed command or an unknown backend answers {@code ERROR <reason>} and changes nothing.
 */
public final class ReplaySession {
  private final HealthSettings settings;
  private final StatusLineClassifier classifier;
  private PoolHealth pool;
  private List<Backend> order = List.of();
  private long now;

  public ReplaySession(HealthSettings settings, StatusLineClassifier classifier) {
    this.settings = settings;
    this.classifier = classifier;
  }

  /**
   * Answers one input line; the result holds one line per element (empty for a blank line or a
   * {@code #} comment).
   */
  public List<String> handle(String line) {
    String trimmed = line.strip();
    if (trimmed.isEmpty() || trimmed.startsWith("#")) {
      return List.of();
    }
    int space = trimmed.indexOf(' ');
    String command = (space < 0 ? trimmed : trimmed.substring(0, space)).toUpperCase(Locale.ROOT);
    String rest = space < 0 ? "" : trimmed.substring(space + 1);
    try {
      return switch (command) {
        case "POOL" -> pool(rest);
        case "PROBE" -> List.of(probe(space < 0 ? "" : line.stripLeading().substring(space + 1)));
        case "STATUS" -> noArgs(command, rest, this::status);
        case "HEALTHY" -> noArgs(command, rest, () -> List.of(healthy()));
        case "AT" -> List.of(at(rest));
        case "OUTCOME" -> List.of(outcome(rest));
        case "SWEEP" -> noArgs(command, rest, this::sweep);
        case "AVAILABLE" -> noArgs(command, rest, () -> List.of(available()));
        case "DAMPED" -> noArgs(command, rest, () -> List.of(join(Backend::damped)));
        default -> throw new ReplayError("unknown command " + command);
      };
    } catch (ReplayError e) {
      return List.of("ERROR " + e.getMessage());
    }
  }

  private static final class ReplayError extends RuntimeException {
    ReplayError(String message) {
      super(message, null, false, false);
    }
  }

  private interface Answer {
    List<String> get();
  }

  private List<String> noArgs(String command, String rest, Answer answer) {
    if (!rest.isBlank()) {
      throw new ReplayError(command + " takes no arguments");
    }
    requirePool();
    return answer.get();
  }

  private List<String> pool(String rest) {
    String[] names = rest.isBlank() ? new String[0] : rest.strip().split("\\s+");
    if (names.length == 0) {
      throw new ReplayError("POOL needs at least one backend");
    }
    Set<String> seen = new HashSet<>();
    for (String n : names) {
      if (!seen.add(n)) {
        throw new ReplayError("duplicate backend " + n);
      }
    }
    PoolHealth next = new PoolHealth(settings);
    List<Backend> members = new ArrayList<>(names.length);
    for (String n : names) {
      members.add(next.add(n));
    }
    for (Backend b : members) {
      next.restore(b, ActiveState.UP, 0, 0, now);
    }
    next.restorePanic(false);
    pool = next;
    order = List.copyOf(members);
    return List.of("OK");
  }

  /** {@code PROBE <backend> <answer>}: the answer is the rest of the line after one space. */
  private String probe(String args) {
    requirePool();
    int space = args.indexOf(' ');
    if (args.isBlank() || space <= 0 || space == args.length() - 1) {
      throw new ReplayError("PROBE needs a backend and an answer");
    }
    Backend b = backend(args.substring(0, space));
    String answer = args.substring(space + 1);
    ProbeResult result =
        switch (answer.strip()) {
          case "TIMEOUT", "REFUSED" -> ProbeResult.timeout(0);
          default -> classifier.classify(answer);
        };
    pool.onProbeResult(b, result.passed(), result.failFast(), now);
    return result.passed() ? "PASS" : "FAIL";
  }

  private List<String> status() {
    List<String> out = new ArrayList<>(order.size());
    for (Backend b : order) {
      out.add(b.id() + (b.state() == ActiveState.UP ? " UP" : " DOWN"));
    }
    return out;
  }

  private String healthy() {
    return join(b -> b.state() == ActiveState.UP);
  }

  private String at(String rest) {
    long ms;
    try {
      ms = Long.parseLong(rest.strip());
    } catch (NumberFormatException e) {
      throw new ReplayError("AT needs a time in ms, got \"" + rest.strip() + "\"");
    }
    if (ms < now) {
      throw new ReplayError("the clock never goes back: it is " + now + ", got " + ms);
    }
    now = ms;
    if (pool != null) {
      pool.expireEjections(now); // as the runtime's timers would have done by now (and releases)
    }
    return "OK";
  }

  private String outcome(String rest) {
    requirePool();
    String[] words = rest.isBlank() ? new String[0] : rest.strip().split("\\s+");
    if (words.length < 2 || words.length > 3) {
      throw new ReplayError("OUTCOME needs a backend, OK or FAIL, and optionally local");
    }
    Backend b = backend(words[0]);
    boolean ok =
        switch (words[1].toUpperCase(Locale.ROOT)) {
          case "OK" -> true;
          case "FAIL" -> false;
          default -> throw new ReplayError("OUTCOME result must be OK or FAIL, got " + words[1]);
        };
    if (words.length == 3 && !words[2].equalsIgnoreCase("local")) {
      throw new ReplayError("OUTCOME origin must be local or absent, got " + words[2]);
    }
    Origin origin = words.length == 3 ? Origin.LOCAL : Origin.UPSTREAM;
    EjectionDecision d = pool.onRequestOutcome(b, ok, origin, now);
    return switch (d.kind()) {
      case EJECTED -> "EJECTED " + d.ejectedUntil();
      case REFUSED_BY_CAP -> "REFUSED";
      case WOULD_EJECT -> "WOULD_EJECT " + d.ejectedUntil();
      case NOT_NEEDED -> "-";
    };
  }

  private List<String> sweep() {
    pool.sweep(now);
    return List.of("OK");
  }

  private String available() {
    Set<String> ready = pool.snapshot().ready();
    String set = join(b -> ready.contains(b.id()));
    return pool.panic() ? set + " PANIC" : set;
  }

  private String join(Predicate<Backend> include) {
    StringBuilder sb = new StringBuilder();
    for (Backend b : order) {
      if (include.test(b)) {
        sb.append(sb.length() == 0 ? "" : ",").append(b.id());
      }
    }
    return sb.length() == 0 ? "none" : sb.toString();
  }

  private Backend backend(String id) {
    Backend b = pool.backend(id);
    if (b == null) {
      throw new ReplayError("unknown backend " + id);
    }
    return b;
  }

  private void requirePool() {
    if (pool == null) {
      throw new ReplayError("no pool yet: start with POOL <backend>...");
    }
  }
}
