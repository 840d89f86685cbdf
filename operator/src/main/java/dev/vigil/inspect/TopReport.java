package dev.vigil.inspect;

import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.api.v1alpha1.BackendState;
import dev.vigil.api.v1alpha1.BackendStatus;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/**
 * The text of {@code kubectl vigil top}: pools sorted by their unavailable share (worst first),
 * with the backends by state, panic and the ejections the cap refused. Pure: objects in, text out.
 */
public final class TopReport {
  /** The columns, in order. */
  public static final List<String> HEADER =
      List.of(
          "NAMESPACE",
          "POOL",
          "AVAILABLE",
          "UNAVAILABLE",
          "DOWN",
          "EJECTED",
          "DAMPED",
          "DRAINING",
          "UNKNOWN",
          "PANIC",
          "REFUSED");

  private TopReport() {}

  /**
   * @param refused per pool ({@code namespace/name}), the ejections refused by the cap, counted
   *     from its {@code EjectionRefused} Events
   */
  public static String render(List<BackendPool> pools, Map<String, Integer> refused) {
    if (pools.isEmpty()) {
      return "No BackendPools.\n";
    }
    List<BackendPool> sorted = new ArrayList<>(pools);
    sorted.sort(
        Comparator.comparingDouble(TopReport::unavailableShare)
            .reversed()
            .thenComparing(p -> p.getMetadata().getNamespace())
            .thenComparing(p -> p.getMetadata().getName()));
    List<List<String>> rows = new ArrayList<>();
    rows.add(HEADER);
    for (BackendPool p : sorted) {
      var status = p.getStatus();
      List<BackendStatus> backends = status == null ? List.of() : status.getBackends();
      int total = status == null || status.getTotal() == null ? 0 : status.getTotal();
      int available = status == null || status.getAvailable() == null ? 0 : status.getAvailable();
      String key = p.getMetadata().getNamespace() + "/" + p.getMetadata().getName();
      rows.add(
          List.of(
              p.getMetadata().getNamespace(),
              p.getMetadata().getName(),
              available + "/" + total,
              total == 0 ? "-" : Math.round(100.0 * unavailableShare(p)) + "%",
              count(backends, BackendState.DOWN),
              count(backends, BackendState.EJECTED),
              count(backends, BackendState.DAMPED),
              count(backends, BackendState.DRAINING, BackendState.MAINT),
              count(backends, BackendState.UNKNOWN),
              status == null ? "-" : String.valueOf(Boolean.TRUE.equals(status.getPanic())),
              String.valueOf(refused.getOrDefault(key, 0))));
    }
    return table(rows);
  }

  /** Unavailable backends over all backends; 0 for a pool with none. */
  static double unavailableShare(BackendPool p) {
    var s = p.getStatus();
    if (s == null || s.getTotal() == null || s.getTotal() == 0) {
      return 0;
    }
    int available = s.getAvailable() == null ? 0 : s.getAvailable();
    return (s.getTotal() - available) / (double) s.getTotal();
  }

  private static String count(List<BackendStatus> backends, BackendState... states) {
    List<BackendState> wanted = List.of(states);
    return String.valueOf(backends.stream().filter(b -> wanted.contains(b.getState())).count());
  }

  /** Columns left-aligned, three spaces apart, as kubectl prints tables. */
  private static String table(List<List<String>> rows) {
    int[] width = new int[HEADER.size()];
    for (List<String> row : rows) {
      for (int i = 0; i < row.size(); i++) {
        width[i] = Math.max(width[i], row.get(i).length());
      }
    }
    StringBuilder out = new StringBuilder();
    for (List<String> row : rows) {
      StringBuilder line = new StringBuilder();
      for (int i = 0; i < row.size(); i++) {
        line.append(
            i == row.size() - 1
                ? row.get(i)
                : String.format("%-" + (width[i] + 3) + "s", row.get(i)));
      }
      out.append(line.toString().stripTrailing()).append('\n');
    }
    return out.toString();
  }
}
