package dev.vigil.demo;

import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.api.v1alpha1.BackendPoolStatus;
import dev.vigil.api.v1alpha1.BackendStatus;
import dev.vigil.health.BackendView;
import dev.vigil.runtime.BackendSnapshot;
import io.fabric8.kubernetes.api.model.Event;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Renders what the demo sees: the {@code kubectl get backendpool} row, the EndpointSlice ready set,
 * each backend (mode, state, streaks, ejections, last probe), recent Events and the step log.
 *
 * <p>A frame fits the terminal: no line is wider than it, and when rows are short the sections are
 * cut in order of importance (the pool row and the ready set always show; then the backends that
 * are not plainly healthy, then Events, then the step log). Only ASCII when the locale is not
 * UTF-8.
 */
public final class LiveView {
  private static final int MAX_BACKEND_ROWS = 16;
  private static final int EVENTS_SHOWN = 8;
  private static final int LOG_SHOWN = 10;

  private enum Style {
    PLAIN,
    TITLE,
    ROW,
    WARNING
  }

  private record Line(String text, Style style) {}

  private final DemoCluster cluster;
  private final boolean color;
  private final long startWallMs;
  private final Terminal terminal;

  public LiveView(DemoCluster cluster, boolean color, long startWallMs, Terminal terminal) {
    this.cluster = cluster;
    this.color = color;
    this.startWallMs = startWallMs;
    this.terminal = terminal;
  }

  /** One frame of the live view: at most the terminal's rows, each at most its width. */
  public String render(Observation o, String header, List<String> log) {
    return render(o, header, log, terminal.height(), true);
  }

  /**
   * The whole view with every section in full (the final state, printed once): lines past the width
   * are left whole, for the terminal (or the plain output) to wrap rather than cut.
   */
  public String renderAll(Observation o, String header) {
    return render(o, header, null, Integer.MAX_VALUE, false);
  }

  private String render(Observation o, String header, List<String> log, int height, boolean cut) {
    List<Line> top = new ArrayList<>();
    top.add(new Line(header, Style.TITLE));
    for (String row : poolRow(o).split("\n")) {
      top.add(new Line(row, Style.PLAIN));
    }
    top.add(new Line(readySet(o), Style.PLAIN));
    List<Line> backends = backends(o);
    List<Line> events = events(o.events());
    List<Line> steps = new ArrayList<>();
    if (log != null) {
      steps.add(new Line("Scenario", Style.TITLE));
      for (String line : log.subList(Math.max(0, log.size() - LOG_SHOWN), log.size())) {
        steps.add(new Line(line, Style.PLAIN));
      }
    }
    int[] given =
        rows(Math.max(0, (long) height - top.size()), backends.size(), events.size(), steps.size());
    List<Line> frame = new ArrayList<>(top);
    frame.addAll(head(backends, given[0]));
    frame.addAll(newest(events, given[1]));
    frame.addAll(newest(steps, given[2]));
    StringBuilder sb = new StringBuilder();
    for (Line line : frame) {
      sb.append(paint(fit(line.text(), cut), line.style())).append('\n');
    }
    return sb.toString();
  }

  /** The Events section: its title and the newest Events, Warnings marked. */
  private List<Line> events(List<Event> all) {
    List<Line> events = new ArrayList<>();
    events.add(new Line("Events", Style.TITLE));
    for (Event e : all.subList(Math.max(0, all.size() - EVENTS_SHOWN), all.size())) {
      events.add(new Line(event(e), "Warning".equals(e.getType()) ? Style.WARNING : Style.PLAIN));
    }
    if (all.isEmpty()) {
      events.add(new Line("  (none yet)", Style.PLAIN));
    }
    return events;
  }

  /**
   * The rows each section gets of those {@code left} after the top: each its minimum first (the
   * table's header and first rows, the title and two Events, the title and two steps), then Events,
   * backends and steps more.
   */
  private static int[] rows(long left, int backends, int events, int steps) {
    int[] wanted = {backends, events, steps};
    int[] minimum = {Math.min(wanted[0], 4), Math.min(wanted[1], 3), Math.min(wanted[2], 3)};
    int[] given = new int[3];
    for (int i = 0; i < 3; i++) {
      given[i] = (int) Math.min(minimum[i], left);
      left -= given[i];
    }
    for (int i : new int[] {1, 0, 2}) {
      int more = (int) Math.min(wanted[i] - given[i], left);
      given[i] += more;
      left -= more;
    }
    return given;
  }

  /** The table's header and its first rows; the last says how many were left out. */
  private List<Line> head(List<Line> lines, int n) {
    if (n >= lines.size()) {
      return lines;
    }
    if (n <= 1) {
      return lines.subList(0, Math.max(0, n));
    }
    List<Line> out = new ArrayList<>(lines.subList(0, n - 1));
    int rows = cluster.size() - (n - 2);
    out.add(
        new Line(
            "  ... and " + rows + " more backends (a taller terminal shows them)", Style.PLAIN));
    return out;
  }

  /** The title and the newest n - 1 lines. */
  private static List<Line> newest(List<Line> lines, int n) {
    if (n <= 0 || lines.isEmpty()) {
      return List.of();
    }
    List<Line> out = new ArrayList<>();
    out.add(lines.get(0));
    out.addAll(lines.subList(Math.max(1, lines.size() - (n - 1)), lines.size()));
    return out;
  }

  /** Cut to the terminal's width, and to ASCII when the locale is not UTF-8. */
  private String fit(String text, boolean cut) {
    String t = terminal.unicode() ? text : text.replace("·", "|").replaceAll("[^\\x00-\\x7F]", "?");
    return !cut || t.length() <= terminal.width()
        ? t
        : t.substring(0, terminal.width() - 3) + "...";
  }

  /** {@code kubectl get backendpool -n shop}. */
  public String poolRow(Observation o) {
    BackendPool p = o.pool();
    BackendPoolStatus s = p == null ? null : p.getStatus();
    String age = "-";
    if (p != null && p.getMetadata().getCreationTimestamp() != null) {
      long ms =
          System.currentTimeMillis()
              - Instant.parse(p.getMetadata().getCreationTimestamp()).toEpochMilli();
      age = Math.max(0, ms / 1000) + "s";
    }
    List<String[]> cells = new ArrayList<>();
    cells.add(new String[] {"NAME", "POLICY", "AVAILABLE", "TOTAL", "EJECTED", "PANIC", "AGE"});
    cells.add(
        new String[] {
          cluster.poolName(),
          p == null ? "-" : p.getSpec().getPolicyRef().getName(),
          s == null ? "" : String.valueOf(s.getAvailability()),
          s == null ? "" : String.valueOf(s.getTotal()),
          s == null ? "" : String.valueOf(s.getEjected()),
          s == null ? "" : String.valueOf(s.getPanic()),
          age
        });
    return Table.render(cells);
  }

  private List<Line> backends(Observation o) {
    Map<String, BackendSnapshot> byPod = snapshotsByPod(o);
    Map<String, BackendStatus> statusByPod = statusesByPod(o);
    List<String[]> cells = new ArrayList<>();
    cells.add(
        new String[] {
          "BACKEND", "ADDRESS", "MODE", "STATE", "SLICE", "RUN", "ERR", "EJ", "LAST PROBE"
        });
    List<Integer> shown = interesting(o, byPod);
    for (int i : shown) {
      String pod = cluster.podName(i);
      cells.add(backendRow(o, i, byPod.get(pod), statusByPod.get(pod)));
    }
    List<Line> lines = new ArrayList<>();
    for (String line : fitted(cells).split("\n")) {
      lines.add(new Line(line, Style.ROW));
    }
    if (shown.size() < cluster.size()) {
      lines.add(
          new Line(
              "  ... and " + (cluster.size() - shown.size()) + " more backends, Up and ready",
              Style.PLAIN));
    }
    return lines;
  }

  /** The runtime's view of each backend, by Pod name; empty before the pool runs. */
  private static Map<String, BackendSnapshot> snapshotsByPod(Observation o) {
    Map<String, BackendSnapshot> byPod = new HashMap<>();
    if (o.view() != null) {
      for (BackendSnapshot b : o.view().backends()) {
        byPod.put(b.member().id(), b);
      }
    }
    return byPod;
  }

  /** Each backend's entry in the pool's published status, by Pod name. */
  private static Map<String, BackendStatus> statusesByPod(Observation o) {
    Map<String, BackendStatus> statusByPod = new HashMap<>();
    if (o.pool() != null
        && o.pool().getStatus() != null
        && o.pool().getStatus().getBackends() != null) {
      for (BackendStatus b : o.pool().getStatus().getBackends()) {
        statusByPod.put(b.getPod(), b);
      }
    }
    return statusByPod;
  }

  /**
   * Backend i's row: the runtime's view {@code b} where there is one, else its published status
   * {@code st}; either may be null.
   */
  private String[] backendRow(Observation o, int i, BackendSnapshot b, BackendStatus st) {
    String ip = DemoCluster.address(i);
    BackendView d = b == null ? null : b.decision();
    Boolean ready = o.endpoints().get(ip);
    return new String[] {
      cluster.podName(i),
      ip,
      cluster.backend(i).mode().name().toLowerCase(java.util.Locale.ROOT),
      state(d, st),
      ready == null ? "-" : ready ? "ready" : "not ready",
      d == null ? "-" : d.failRun() > 0 ? "-" + d.failRun() : "+" + d.passRun(),
      d == null ? "-" : String.valueOf(d.upstreamErrors() + d.localOriginErrors()),
      d == null
          ? (st == null ? "-" : String.valueOf(st.getEjections()))
          : String.valueOf(d.multiplier()),
      lastProbe(b, st)
    };
  }

  private static String state(BackendView d, BackendStatus st) {
    return d != null
        ? (d.ejected() ? "Ejected" : title(d.state().name()))
        : st != null && st.getState() != null ? title(st.getState().name()) : "-";
  }

  private static String lastProbe(BackendSnapshot b, BackendStatus st) {
    return b != null && b.lastProbe() != null
        ? (b.lastProbe().ok() ? "ok" : b.lastProbe().detail())
            + " "
            + b.lastProbe().latencyMs()
            + "ms"
        : st != null && st.getLastProbe() != null ? st.getLastProbe().getDetail() : "-";
  }

  /** The table, without the address column when it would be wider than the terminal. */
  private String fitted(List<String[]> cells) {
    String table = Table.render(cells);
    if (table.lines().anyMatch(l -> l.length() > terminal.width())) {
      // Too wide: the address goes first (the pod's number gives it: 127.0.0.10 is pod 00000).
      cells.replaceAll(row -> dropColumn(row, 1));
      table = Table.render(cells);
    }
    return table;
  }

  private static String[] dropColumn(String[] row, int column) {
    String[] out = new String[row.length - 1];
    System.arraycopy(row, 0, out, 0, column);
    System.arraycopy(row, column + 1, out, column, row.length - column - 1);
    return out;
  }

  /**
   * The backends to show, most important first: those not plainly healthy (a mode other than
   * healthy, not Up, or not ready in the slice), then the healthy ones, each in index order, at
   * most {@link #MAX_BACKEND_ROWS}.
   */
  private List<Integer> interesting(Observation o, Map<String, BackendSnapshot> byPod) {
    List<Integer> out = new ArrayList<>();
    List<Integer> healthy = new ArrayList<>();
    for (int i = 0; i < cluster.size(); i++) {
      BackendSnapshot b = byPod.get(cluster.podName(i));
      boolean plain =
          cluster.backend(i).mode() == DemoBackend.Mode.HEALTHY
              && b != null
              && b.healthy()
              && Boolean.TRUE.equals(o.endpoints().get(DemoCluster.address(i)));
      (plain ? healthy : out).add(i);
    }
    out.addAll(healthy);
    return out.subList(0, Math.min(MAX_BACKEND_ROWS, out.size()));
  }

  private String readySet(Observation o) {
    Set<String> ready = o.ready();
    StringBuilder sb = new StringBuilder();
    sb.append("EndpointSlice ready set")
        .append(" (Service ")
        .append(cluster.serviceName())
        .append(", ")
        .append(ready.size())
        .append('/')
        .append(o.endpoints().size())
        .append(o.panic() ? ", PANIC: every decided backend published" : "")
        .append("): ");
    if (ready.isEmpty()) {
      return sb.append(o.endpoints().isEmpty() ? "no endpoints yet" : "none").toString();
    }
    int n = 0;
    for (String ip : ready) {
      if (n++ == 12) {
        sb.append(" ...");
        break;
      }
      sb.append(n == 1 ? "" : " ").append(ip);
    }
    return sb.toString();
  }

  private String event(Event e) {
    String at = "";
    if (e.getLastTimestamp() != null) {
      at = Timeline.seconds(Instant.parse(e.getLastTimestamp()).toEpochMilli() - startWallMs);
    }
    return at + "  " + e.getType() + "  " + e.getReason() + "  " + e.getMessage();
  }

  private String paint(String line, Style style) {
    if (!color) {
      return line;
    }
    return switch (style) {
      case TITLE -> "\033[1m" + line + "\033[0m";
      case WARNING -> "\033[33m" + line + "\033[0m";
      case ROW ->
          line.contains(" Down ") || line.contains(" not ready ")
              ? "\033[31m" + line + "\033[0m"
              : line.contains(" Ejected ") ? "\033[33m" + line + "\033[0m" : line;
      case PLAIN -> line;
    };
  }

  private static String title(String s) {
    return s.charAt(0) + s.substring(1).toLowerCase();
  }
}
