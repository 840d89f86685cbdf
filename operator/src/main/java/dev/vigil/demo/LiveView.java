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
 * Renders what the demo sees: the {@code kubectl get backendpool} row, each backend (mode, state,
 * streaks, ejections, last probe), the EndpointSlice ready set, recent Events and the step log.
 */
public final class LiveView {
  private static final int MAX_BACKEND_ROWS = 16;
  private static final int EVENTS_SHOWN = 8;
  private static final int LOG_SHOWN = 10;

  private final DemoCluster cluster;
  private final boolean color;
  private final long startWallMs;

  public LiveView(DemoCluster cluster, boolean color, long startWallMs) {
    this.cluster = cluster;
    this.color = color;
    this.startWallMs = startWallMs;
  }

  /** The whole screen. */
  public String render(Observation o, String header, List<String> log) {
    StringBuilder sb = new StringBuilder();
    sb.append(bold(header)).append("\n\n");
    sb.append(poolRow(o)).append('\n');
    sb.append(backends(o)).append('\n');
    sb.append(readySet(o)).append("\n\n");
    sb.append(bold("Events")).append('\n');
    List<Event> events = o.events();
    for (Event e : events.subList(Math.max(0, events.size() - EVENTS_SHOWN), events.size())) {
      sb.append(event(e)).append('\n');
    }
    if (events.isEmpty()) {
      sb.append("  (none yet)\n");
    }
    if (log != null) {
      sb.append('\n').append(bold("Scenario")).append('\n');
      for (String line : log.subList(Math.max(0, log.size() - LOG_SHOWN), log.size())) {
        sb.append(line).append('\n');
      }
    }
    return sb.toString();
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

  private String backends(Observation o) {
    Map<String, BackendSnapshot> byPod = new HashMap<>();
    if (o.view() != null) {
      for (BackendSnapshot b : o.view().backends()) {
        byPod.put(b.member().id(), b);
      }
    }
    Map<String, BackendStatus> statusByPod = new HashMap<>();
    if (o.pool() != null
        && o.pool().getStatus() != null
        && o.pool().getStatus().getBackends() != null) {
      for (BackendStatus b : o.pool().getStatus().getBackends()) {
        statusByPod.put(b.getPod(), b);
      }
    }
    List<String[]> cells = new ArrayList<>();
    cells.add(
        new String[] {
          "BACKEND",
          "ADDRESS",
          "MODE",
          "STATE",
          "SLICE",
          "PASS",
          "FAIL",
          "ERRORS",
          "EJECTIONS",
          "LAST PROBE"
        });
    List<Integer> shown = interesting(o, byPod);
    for (int i : shown) {
      String pod = cluster.podName(i);
      String ip = DemoCluster.address(i);
      BackendSnapshot b = byPod.get(pod);
      BackendView d = b == null ? null : b.decision();
      BackendStatus st = statusByPod.get(pod);
      Boolean ready = o.endpoints().get(ip);
      String state =
          d != null
              ? (d.ejected() ? "Ejected" : title(d.state().name()))
              : st != null && st.getState() != null ? title(st.getState().name()) : "-";
      String probe =
          b != null && b.lastProbe() != null
              ? (b.lastProbe().ok() ? "ok" : b.lastProbe().detail())
                  + " "
                  + b.lastProbe().latencyMs()
                  + "ms"
              : st != null && st.getLastProbe() != null ? st.getLastProbe().getDetail() : "-";
      cells.add(
          new String[] {
            pod,
            ip,
            cluster.backend(i).mode().name(),
            state,
            ready == null ? "-" : ready ? "ready" : "not ready",
            d == null ? "-" : String.valueOf(d.passRun()),
            d == null ? "-" : String.valueOf(d.failRun()),
            d == null ? "-" : String.valueOf(d.upstreamErrors() + d.localOriginErrors()),
            d == null
                ? (st == null ? "-" : String.valueOf(st.getEjections()))
                : String.valueOf(d.multiplier()),
            probe
          });
    }
    StringBuilder sb = new StringBuilder();
    for (String line : Table.render(cells).split("\n")) {
      sb.append(paint(line)).append('\n');
    }
    if (shown.size() < cluster.size()) {
      sb.append("  ... and ")
          .append(cluster.size() - shown.size())
          .append(" more backends, Up and ready\n");
    }
    return sb.toString();
  }

  /** Every backend when few; else the ones not plainly healthy, then the first few. */
  private List<Integer> interesting(Observation o, Map<String, BackendSnapshot> byPod) {
    List<Integer> out = new ArrayList<>();
    if (cluster.size() <= MAX_BACKEND_ROWS) {
      for (int i = 0; i < cluster.size(); i++) {
        out.add(i);
      }
      return out;
    }
    for (int i = 0; i < cluster.size() && out.size() < MAX_BACKEND_ROWS; i++) {
      BackendSnapshot b = byPod.get(cluster.podName(i));
      boolean plain =
          cluster.backend(i).mode() == DemoBackend.Mode.HEALTHY
              && b != null
              && b.healthy()
              && Boolean.TRUE.equals(o.endpoints().get(DemoCluster.address(i)));
      if (!plain) {
        out.add(i);
      }
    }
    for (int i = 0; i < cluster.size() && out.size() < MAX_BACKEND_ROWS; i++) {
      if (!out.contains(i)) {
        out.add(i);
      }
    }
    out.sort(Integer::compare);
    return out;
  }

  private String readySet(Observation o) {
    Set<String> ready = o.ready();
    StringBuilder sb = new StringBuilder();
    sb.append(bold("EndpointSlice ready set"))
        .append(" (Service ")
        .append(cluster.serviceName())
        .append(", ")
        .append(ready.size())
        .append('/')
        .append(o.endpoints().size())
        .append(o.panic() ? ", PANIC: every decided backend published" : "")
        .append("): ");
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
    String line = at + "  " + e.getType() + "  " + e.getReason() + "  " + e.getMessage();
    return "Warning".equals(e.getType()) ? yellow(line) : line;
  }

  private String paint(String line) {
    if (!color) {
      return line;
    }
    if (line.contains(" Down ") || line.contains(" not ready ")) {
      return "\033[31m" + line + "\033[0m";
    }
    if (line.contains(" Ejected ")) {
      return "\033[33m" + line + "\033[0m";
    }
    return line;
  }

  private String bold(String s) {
    return color ? "\033[1m" + s + "\033[0m" : s;
  }

  private String yellow(String s) {
    return color ? "\033[33m" + s + "\033[0m" : s;
  }

  private static String title(String s) {
    return s.charAt(0) + s.substring(1).toLowerCase();
  }
}
