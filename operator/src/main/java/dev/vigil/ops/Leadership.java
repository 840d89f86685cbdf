package dev.vigil.ops;

/**
 * What this replica knows about leader election, fed by the Lease callbacks. A replica that leads
 * must have synced informers to be ready; one that stands by is ready once it has seen a leader (so
 * it can read the Lease and will take over when that leader goes).
 */
public final class Leadership {
  /** The replica's role. */
  public enum Role {
    /** Leader election is off: this replica is the only writer. */
    SOLE,
    /** Waiting for the Lease, no leader seen yet. */
    WAITING,
    /** Another replica leads; this one stands by. */
    STANDBY,
    /** This replica holds the Lease. */
    LEADING,
    /** This replica lost the Lease (it exits in a cluster; tests keep it running). */
    LOST
  }

  private volatile Role role;
  private volatile String leader;
  private volatile boolean fenced;

  private Leadership(Role role) {
    this.role = role;
  }

  /** Leader election off: always {@link Role#SOLE}. */
  public static Leadership sole() {
    return new Leadership(Role.SOLE);
  }

  /** Leader election on: starts {@link Role#WAITING}. */
  public static Leadership elected() {
    return new Leadership(Role.WAITING);
  }

  public void startedLeading() {
    role = Role.LEADING;
  }

  public void stoppedLeading() {
    role = Role.LOST;
  }

  /** A replica, maybe this one, holds the Lease. */
  public void newLeader(String identity) {
    leader = identity;
    if (role == Role.WAITING) {
      role = Role.STANDBY;
    }
  }

  /**
   * Sharded: this replica's shard Lease was lost. It no longer probes or writes and is not ready
   * again until it restarts (in a cluster it exits), whatever its role in the leader election.
   */
  public void fenced() {
    fenced = true;
  }

  /** True once {@link #fenced()} was called. */
  public boolean isFenced() {
    return fenced;
  }

  public Role role() {
    return role;
  }

  /** The identity of the last leader seen, or null. */
  public String leader() {
    return leader;
  }

  /** True when this replica runs the reconcilers (leads, or is the only replica). */
  public boolean active() {
    Role r = role;
    return r == Role.SOLE || r == Role.LEADING;
  }
}
