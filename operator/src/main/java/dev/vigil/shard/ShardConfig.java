package dev.vigil.shard;

import java.time.Duration;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * Scale-out settings (docs/design.md §7), from the flags {@code --sharding}, {@code
 * --shard-identity}, {@code --shard-ring}, {@code --shard-lease-duration}, {@code
 * --shard-move-rate}, {@code --zone} (with the variable {@code NODE_NAME}) and {@code
 * --advertise-address} (with {@code POD_IP}). A Lease is renewed every third of its duration and
 * must have been renewed within two thirds of it for the replica to write (the design's 5 s and 10
 * s for 15 s).
 *
 * @param enabled every replica owns the pools the sharder labels with its identity; off: one
 *     replica runs every pool (leader election as before)
 * @param identity this replica's shard name (the Pod's name): the Lease is {@code
 *     vigil-shard-<identity>} and pools carry {@code vigil.dev/shard=<identity>}
 * @param ring the {@code vigil.dev/ring} label of the shard Leases (one ring per installation)
 * @param namespace the Leases' namespace (the leader Lease's)
 * @param leaseDurationSeconds how long a shard Lease lasts unrenewed
 * @param movesPerMinuteFraction planned moves per minute as a fraction of all pools; 0 = no limit
 * @param zone this replica's zone as {@code --zone} gives it; null: its Node's ({@link
 *     ReplicaZone})
 * @param nodeName the Node this replica runs on ({@code NODE_NAME}), whose zone label is read once
 *     at start unless {@code zone} is given; null when unset
 * @param advertiseAddress the IP address other replicas reach this one's outcome port at, to ask it
 *     to confirm a Down ({@code --advertise-address}, else {@code POD_IP}); null: it is asked
 *     nothing (docs/design.md §8)
 */
public record ShardConfig(
    boolean enabled,
    String identity,
    String ring,
    String namespace,
    int leaseDurationSeconds,
    double movesPerMinuteFraction,
    String zone,
    String nodeName,
    String advertiseAddress) {
  public static final String SHARD_LABEL = "vigil.dev/shard";
  public static final String RING_LABEL = "vigil.dev/ring";
  public static final String LEASE_PREFIX = "vigil-shard-";

  private static final Pattern LABEL_VALUE = Pattern.compile("[a-z0-9]([-a-z0-9.]{0,61}[a-z0-9])?");

  /** A label value (a zone is a Node label's value): empty, or alphanumeric at both ends. */
  private static final Pattern ZONE =
      Pattern.compile("([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?");

  private static final Pattern IP_LITERAL =
      Pattern.compile("\\d{1,3}(\\.\\d{1,3}){3}|[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*");

  public ShardConfig {
    if (leaseDurationSeconds < 3) {
      throw new IllegalArgumentException("--shard-lease-duration must be at least 3 seconds");
    }
  }

  /** Settings without a zone of their own: the zone comes from the Node, if any. */
  public ShardConfig(
      boolean enabled,
      String identity,
      String ring,
      String namespace,
      int leaseDurationSeconds,
      double movesPerMinuteFraction) {
    this(
        enabled,
        identity,
        ring,
        namespace,
        leaseDurationSeconds,
        movesPerMinuteFraction,
        null,
        null,
        null);
  }

  /** Renew this often. */
  public Duration renewPeriod() {
    return Duration.ofMillis(leaseDurationSeconds * 1000L / 3);
  }

  /** Stop writing when the last renewal is this old. */
  public long renewDeadlineMs() {
    return leaseDurationSeconds * 2000L / 3;
  }

  public long leaseDurationMs() {
    return leaseDurationSeconds * 1000L;
  }

  /** Settings for a replica in tests: sharding on with this identity, namespace and timing. */
  public static ShardConfig of(
      String identity, String namespace, int leaseDurationSeconds, double moveFraction) {
    return new ShardConfig(true, identity, "vigil", namespace, leaseDurationSeconds, moveFraction);
  }

  /**
   * Parses the flags.
   *
   * @param get a flag's value (or its variable's), null when unset
   * @param env for the identity's fallbacks POD_NAME and HOSTNAME, NODE_NAME and POD_IP
   * @param leaseNamespace the leader Lease's namespace, which the shard Leases share
   * @throws IllegalArgumentException naming the flag
   */
  public static ShardConfig parse(
      Function<String, String> get, Function<String, String> env, String leaseNamespace) {
    String on = or(get.apply("sharding"), "false");
    if (!on.equalsIgnoreCase("true") && !on.equalsIgnoreCase("false")) {
      throw new IllegalArgumentException("--sharding must be true or false, got " + on);
    }
    String ring = or(get.apply("shard-ring"), "vigil");
    check("shard-ring", ring);
    int duration = number("shard-lease-duration", or(get.apply("shard-lease-duration"), "15"));
    if (duration < 3 || duration > 3600) {
      throw new IllegalArgumentException(
          "--shard-lease-duration must be 3..3600 seconds, got " + duration);
    }
    int rate = number("shard-move-rate", or(get.apply("shard-move-rate"), "10"));
    if (rate < 0 || rate > 100) {
      throw new IllegalArgumentException(
          "--shard-move-rate must be a percentage 0..100 (0: no limit), got " + rate);
    }
    String zone = get.apply("zone");
    if (zone != null && !ZONE.matcher(zone.trim()).matches()) {
      throw new IllegalArgumentException(
          "--zone must be a label value (at most 63 letters, digits, '-', '_' and '.', a letter or"
              + " digit at each end), got "
              + zone);
    }
    zone = zone == null || zone.isBlank() ? null : zone.trim();
    String node = env.apply("NODE_NAME");
    node = node == null || node.isBlank() ? null : node.trim();
    String address = advertiseAddress(or(get.apply("advertise-address"), env.apply("POD_IP")));
    if (!Boolean.parseBoolean(on)) {
      return new ShardConfig(
          false, null, ring, leaseNamespace, duration, rate / 100d, zone, node, address);
    }
    String identity =
        or(get.apply("shard-identity"), or(env.apply("POD_NAME"), env.apply("HOSTNAME")));
    if (identity == null) {
      throw new IllegalArgumentException(
          "--sharding needs --shard-identity (default: $POD_NAME, else $HOSTNAME; neither is set)");
    }
    check("shard-identity", identity);
    return new ShardConfig(
        true, identity, ring, leaseNamespace, duration, rate / 100d, zone, node, address);
  }

  /** An IP address literal (no name: nothing is resolved at start), or null when unset. */
  private static String advertiseAddress(String v) {
    if (v == null || v.isBlank()) {
      return null;
    }
    String ip = v.trim();
    try {
      if (IP_LITERAL.matcher(ip).matches()) {
        return java.net.InetAddress.getByName(ip).getHostAddress(); // a literal: no lookup
      }
    } catch (java.net.UnknownHostException e) {
      // out of range: refused below
    }
    throw new IllegalArgumentException(
        "--advertise-address (or POD_IP) must be an IPv4 or IPv6 address, got " + v);
  }

  private static void check(String flag, String v) {
    if (!LABEL_VALUE.matcher(v).matches()) {
      throw new IllegalArgumentException(
          "--"
              + flag
              + " must be a label value of at most 63 lowercase letters, digits, '-' and '.', got "
              + v);
    }
  }

  private static int number(String flag, String v) {
    try {
      return Integer.parseInt(v.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("--" + flag + " must be a whole number, got " + v);
    }
  }

  private static String or(String v, String fallback) {
    return v == null || v.isBlank() ? fallback : v;
  }
}
