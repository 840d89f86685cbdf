package dev.vigil.health;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;

/**
 * The running bookkeeping of one {@link PoolHealth}: counts, the panic flag with its band, the
 * version and the last snapshot. Every change to a backend's state, ejected, draining or hold is
 * bracketed by {@link #change} (remember what it published, uncount it) and {@link #tally} (count
 * it again); {@link #end} then re-evaluates panic once and moves the version when anything
 * published changed during the event.
 */
final class PoolLedger {
  private static final int AVAILABLE = 1;
  private static final int DECIDED = 2;
  private static final int DRAINING_SERVING = 4;
  private static final int MAINT = 8;

  int total;
  int up;
  int down;
  int unknown;
  int draining;
  int ejected;
  int ejectedNotDraining;
  int damped;
  int decided;
  int available;
  boolean panic;
  long version;

  private long epoch;
  private Backend[] touched = new Backend[4];
  private int[] touchedBits = new int[4];
  private int touchedCount;
  private boolean reevaluate;
  private boolean panicAtStart;
  private AvailabilitySnapshot lastSnapshot;

  /** Starts an event; {@link #end} leaves the touched list empty again. */
  void begin() {
    epoch++;
    panicAtStart = panic;
  }

  /** Panic must be re-evaluated at the end of this event (settings or the flag changed). */
  void reevaluate() {
    reevaluate = true;
  }

  /**
   * Before a change to state, ejected, damped or draining: remember what b published, uncount it.
   */
  void change(Backend b) {
    if (b.touchEpoch != epoch) {
      b.touchEpoch = epoch;
      if (touchedCount == touched.length) {
        touched = Arrays.copyOf(touched, touchedCount * 2);
        touchedBits = Arrays.copyOf(touchedBits, touchedCount * 2);
      }
      touched[touchedCount] = b;
      touchedBits[touchedCount++] = published(b);
    }
    tally(b, -1);
  }

  /** Counts b ({@code d = 1}) or uncounts it ({@code d = -1}). */
  void tally(Backend b, int d) {
    total += d;
    switch (b.state) {
      case UP -> up += d;
      case DOWN -> down += d;
      default -> unknown += d;
    }
    if (b.ejected) {
      ejected += d;
    }
    if (b.damped) {
      damped += d;
    }
    if (b.heldOut()) {
      draining += d;
      return;
    }
    if (b.ejected) {
      ejectedNotDraining += d;
    } else if (b.healthy()) {
      available += d;
    }
    if (b.state != ActiveState.UNKNOWN) {
      decided += d;
    }
  }

  /** After an event: re-evaluate panic, move the version if anything published changed. */
  void end(HealthSettings settings) {
    if (touchedCount == 0 && !reevaluate) {
      return;
    }
    panic = panicAfter(settings);
    boolean changed = panic != panicAtStart;
    int relevant =
        panic
            ? AVAILABLE | DECIDED | DRAINING_SERVING | MAINT
            : AVAILABLE | DRAINING_SERVING | MAINT;
    for (int i = 0; i < touchedCount; i++) {
      if (((touchedBits[i] ^ published(touched[i])) & relevant) != 0) {
        changed = true;
      }
      touched[i] = null;
    }
    touchedCount = 0;
    reevaluate = false;
    if (changed) {
      version++;
    }
  }

  /**
   * Panic with a band (docs/design.md §2.7): enter when available < threshold% of decided, leave
   * when available >= exit% of decided; threshold 0 disables panic.
   */
  private boolean panicAfter(HealthSettings settings) {
    int threshold = settings.panicThresholdPercent();
    if (threshold == 0) {
      return false;
    }
    long share = available * 100L;
    if (!panic) {
      return share < (long) threshold * decided;
    }
    return share < (long) settings.panicExitPercent() * decided;
  }

  /**
   * The cap (docs/design.md §2.4): refuse an ejection that would put more than {@code
   * maxEjectionPercent} of the not-draining backends out; {@code alwaysEjectOne} lets it through
   * when no other not-draining backend is ejected. A draining backend's ejection takes nobody out
   * of that denominator, so the cap does not apply to it.
   */
  boolean capAllows(Backend b, HealthSettings settings) {
    if (b.heldOut()) {
      return true;
    }
    if (settings.alwaysEjectOne() && ejectedNotDraining == 0) {
      return true;
    }
    long notDraining = total - draining;
    return (ejectedNotDraining + 1L) * 100 <= settings.maxEjectionPercent() * notDraining;
  }

  private static int published(Backend b) {
    if (b.pool == null) {
      return 0;
    }
    boolean healthy = b.healthy();
    if (b.heldOut()) {
      int maint = b.hold.kind() == BackendHold.Kind.MAINT ? MAINT : 0;
      return (healthy ? DRAINING_SERVING : 0) | maint;
    }
    return (healthy ? AVAILABLE : 0) | (b.state != ActiveState.UNKNOWN ? DECIDED : 0);
  }

  AvailabilitySnapshot.Counts counts() {
    return new AvailabilitySnapshot.Counts(
        total, available, up, down, unknown, ejected, draining, decided, damped);
  }

  /** The last snapshot if still true, a new counts record on shared sets, or a rebuild. */
  AvailabilitySnapshot snapshot(Backend[] members, int size) {
    AvailabilitySnapshot last = lastSnapshot;
    if (last != null && last.version() == version) {
      if (countsEqual(last.counts())) {
        return last;
      }
      last =
          new AvailabilitySnapshot(
              version, panic, last.available(), last.ready(), last.drainingServing(), counts());
    } else {
      last = build(members, size);
    }
    lastSnapshot = last;
    return last;
  }

  private boolean countsEqual(AvailabilitySnapshot.Counts c) {
    return c.total() == total
        && c.available() == available
        && c.up() == up
        && c.down() == down
        && c.unknown() == unknown
        && c.ejected() == ejected
        && c.draining() == draining
        && c.decided() == decided
        && c.damped() == damped;
  }

  /**
   * Rebuilds the published sets as immutable {@link Set#of} sets: an open-addressed table of
   * references (about 8 bytes a member) instead of a hash node (about 40).
   */
  private AvailabilitySnapshot build(Backend[] members, int size) {
    List<String> avail = new ArrayList<>(available);
    List<String> ready = panic ? new ArrayList<>(decided) : avail;
    List<String> drainingServing = draining == 0 ? List.of() : new ArrayList<>();
    for (int i = 0; i < size; i++) {
      Backend b = members[i];
      int bits = published(b);
      if ((bits & AVAILABLE) != 0) {
        avail.add(b.id);
      }
      if (panic && (bits & DECIDED) != 0) {
        ready.add(b.id);
      }
      if ((bits & DRAINING_SERVING) != 0) {
        drainingServing.add(b.id);
      }
    }
    Set<String> frozen = frozen(avail);
    return new AvailabilitySnapshot(
        version, panic, frozen, panic ? frozen(ready) : frozen, frozen(drainingServing), counts());
  }

  /** The ids (distinct: a pool's members) as an immutable set. */
  private static Set<String> frozen(List<String> ids) {
    return Set.of(ids.toArray(String[]::new));
  }
}
