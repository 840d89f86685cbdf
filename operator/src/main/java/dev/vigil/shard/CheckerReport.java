package dev.vigil.shard;

import io.fabric8.kubernetes.api.model.ObjectMeta;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/**
 * What a replica tells the others about itself as a checker (docs/design.md §8), as annotations on
 * its shard Lease, written with the renewals it makes anyway: its zone ({@value #ZONE}, "" when
 * unknown), its failing share ({@value #FAILING_SHARE}, 0 to 1 with 3 decimals) and where it takes
 * questions from owners ({@value #ADDRESS}: {@code host:port} of its outcome port, {@code
 * [v6]:port} for IPv6; "" when it takes none). A Lease without them (a replica older than these
 * annotations) reads as zone "", share 0 and no address; so does one whose share does not parse or
 * lies outside 0..1.
 */
public record CheckerReport(String zone, double failingShare, String address) {
  public static final String ZONE = "vigil.dev/zone";
  public static final String FAILING_SHARE = "vigil.dev/failing-share";
  public static final String ADDRESS = "vigil.dev/address";

  /** What a Lease without the annotations reads as. */
  public static final CheckerReport UNKNOWN = new CheckerReport("", 0, "");

  public CheckerReport {
    zone = zone == null ? "" : zone;
    address = address == null ? "" : address;
  }

  /** A report without an address: this replica takes no questions. */
  public CheckerReport(String zone, double failingShare) {
    this(zone, failingShare, "");
  }

  /** {@code host:port}, bracketing an IPv6 host; "" without a host or a port. */
  public static String address(String host, int port) {
    if (host == null || host.isEmpty() || port <= 0) {
      return "";
    }
    return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
  }

  /** The share as the annotation carries it: 3 decimals, a dot whatever the locale. */
  public String shareText() {
    return String.format(Locale.ROOT, "%.3f", failingShare);
  }

  /** Sets both annotations on {@code meta}, keeping any others. */
  public void annotate(ObjectMeta meta) {
    Map<String, String> annotations =
        meta.getAnnotations() == null ? new HashMap<>() : new HashMap<>(meta.getAnnotations());
    annotations.put(ZONE, zone);
    annotations.put(FAILING_SHARE, shareText());
    annotations.put(ADDRESS, address);
    meta.setAnnotations(annotations);
  }

  /** What a Lease's annotations say; {@link #UNKNOWN}'s values for what is missing or invalid. */
  public static CheckerReport of(ObjectMeta meta) {
    Map<String, String> annotations = meta == null ? null : meta.getAnnotations();
    if (annotations == null) {
      return UNKNOWN;
    }
    return new CheckerReport(
        annotations.getOrDefault(ZONE, ""),
        share(annotations.get(FAILING_SHARE)),
        annotations.getOrDefault(ADDRESS, ""));
  }

  private static double share(String text) {
    if (text == null) {
      return 0;
    }
    try {
      double share = Double.parseDouble(text.trim());
      return share >= 0 && share <= 1 ? share : 0;
    } catch (NumberFormatException e) {
      return 0;
    }
  }
}
