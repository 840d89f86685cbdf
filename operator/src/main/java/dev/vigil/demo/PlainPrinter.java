package dev.vigil.demo;

import io.fabric8.kubernetes.api.model.Event;
import java.io.PrintStream;
import java.time.Instant;
import java.util.HashSet;
import java.util.Set;
import java.util.TreeSet;

/**
 * The live view as plain lines, for output that is not a terminal: a line when the EndpointSlice
 * ready set or the pool row changes, and each new Event once.
 */
final class PlainPrinter {
  /** Room for addresses on a line of 80 after its time stamp and counts. */
  private static final int LIST_COLUMNS = 50;

  private final PrintStream out;
  private final DemoCluster cluster;
  private final long startWallMs;
  private final Set<String> seenEvents = new HashSet<>();
  private String lastReady = "";
  private String lastRow = "";

  PlainPrinter(PrintStream out, DemoCluster cluster, long startWallMs) {
    this.out = out;
    this.cluster = cluster;
    this.startWallMs = startWallMs;
  }

  /** The ready addresses, or, when they would take more than a line, those not ready. */
  private static String members(Observation o) {
    String ready = String.join(" ", o.ready());
    if (ready.length() <= LIST_COLUMNS) {
      return ready;
    }
    Set<String> out = new TreeSet<>(o.endpoints().keySet());
    out.removeAll(o.ready());
    return out.isEmpty() ? "all" : "all but " + String.join(" ", out);
  }

  synchronized void changed(Observation o) {
    printReady(o);
    printPoolRow(o);
    printNewEvents(o);
    out.flush();
  }

  private void printReady(Observation o) {
    String ready = o.ready().size() + "/" + o.endpoints().size() + (o.panic() ? " PANIC" : "");
    if (!ready.equals(lastReady)) {
      lastReady = ready;
      out.println(
          Timeline.seconds(o.elapsedMs())
              + "  slice ready "
              + ready
              + (o.ready().isEmpty()
                  ? (o.endpoints().isEmpty() ? " (no endpoints yet)" : " (none)")
                  : ": " + members(o)));
    }
  }

  private void printPoolRow(Observation o) {
    if (o.pool() == null || o.pool().getStatus() == null) {
      return;
    }
    var s = o.pool().getStatus();
    String row =
        String.format(
            "bp/%s available %s total %s ejected %s panic %s",
            cluster.poolName(), s.getAvailability(), s.getTotal(), s.getEjected(), s.getPanic());
    if (!row.equals(lastRow)) {
      lastRow = row;
      out.println(Timeline.seconds(o.elapsedMs()) + "  " + row);
    }
  }

  /** o.events() is in time order (ClusterReads.events); new ones print in that order. */
  private void printNewEvents(Observation o) {
    for (Event e : o.events()) {
      String key = e.getMetadata().getName() + "/" + e.getMetadata().getResourceVersion();
      if (seenEvents.add(key)) {
        long at =
            e.getLastTimestamp() == null
                ? o.elapsedMs()
                : Instant.parse(e.getLastTimestamp()).toEpochMilli() - startWallMs;
        out.println(
            Timeline.seconds(at)
                + "  event "
                + e.getType()
                + " "
                + e.getReason()
                + ": "
                + e.getMessage());
      }
    }
  }
}
