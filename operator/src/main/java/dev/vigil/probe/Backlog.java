package dev.vigil.probe;

import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Probes started on one event loop within the last {@code windowMs} that have not been answered
 * yet: the work the loop has taken on and not drained. Every {@link ProbeScheduler} on the loop
 * shares it ({@link Timers#backlog()}), so a hundred small pools on one loop are held back together
 * as one large pool is; when it is full, starts wait in line ({@link #hold}) and go as room comes
 * back ({@link #release}): one line per pool, served round robin (one start of each waiting pool in
 * turn, oldest first within a pool), so a pool of 5,000 backends with thousands of held starts
 * delays a small pool's start by at most one of its own, never by its whole line (issue 31).
 * Healthy probes answer in about a millisecond, so this stays near the start rate times that; when
 * the loop (or the machine) cannot keep up, every probe takes longer and it grows with each start.
 * A probe older than the window stops counting, so a hanging backend holds a place for {@code
 * windowMs}, not for its whole timeout.
 *
 * <p>Counts per bucket of start time in a ring; O(1) per start and answer (a bucket is cleared when
 * time moves past it). Not thread-safe: the loop's thread only.
 */
public final class Backlog {

  /** A start waiting for room. */
  interface Held {
    /** Room came back: start now (or do nothing, if no longer wanted). */
    void startHeld(long now);
  }

  private final long bucketMs;
  private final int[] counts;
  private final int max;

  /** Held starts by pool, in the order the pools are served next (a served pool goes last). */
  private final Map<Object, ArrayDeque<Held>> held = new LinkedHashMap<>();

  private int heldCount;
  private long newest = Long.MIN_VALUE; // bucket number of the newest bucket in the ring
  private int size;

  /**
   * @param windowMs how long a started probe counts (rounded up to whole buckets)
   * @param buckets how many buckets the window is cut into
   * @param max unanswered probes within the window before starts wait
   */
  Backlog(long windowMs, int buckets, int max) {
    if (windowMs < buckets || buckets < 1 || max < 1) {
      throw new IllegalArgumentException("backlog: windowMs >= buckets >= 1, max >= 1");
    }
    this.bucketMs = (windowMs + buckets - 1) / buckets;
    this.counts = new int[buckets];
    this.max = max;
  }

  /**
   * {@link ProbeScheduler#MAX_BACKLOG} unanswered probes within {@link
   * ProbeScheduler#BACKLOG_WINDOW_MS}, in 10 ms buckets: the one each event loop shares.
   */
  public static Backlog forLoop() {
    return new Backlog(ProbeScheduler.BACKLOG_WINDOW_MS, 10, ProbeScheduler.MAX_BACKLOG);
  }

  /** Whether a start now must wait: the backlog is full, or others wait already. */
  boolean full(long now) {
    return heldCount > 0 || size(now) >= max;
  }

  /** Queues a start of {@code pool} (any identity: its scheduler) until {@link #release}. */
  void hold(Object pool, Held start) {
    held.computeIfAbsent(pool, p -> new ArrayDeque<>()).add(start);
    heldCount++;
  }

  /**
   * Starts waiting starts while there is room (each start counts itself): the oldest of the pool
   * whose turn it is, then that pool goes to the back of the line if it has more.
   */
  void release(long now) {
    while (heldCount > 0 && size(now) < max) {
      Iterator<Map.Entry<Object, ArrayDeque<Held>>> first = held.entrySet().iterator();
      Map.Entry<Object, ArrayDeque<Held>> turn = first.next();
      first.remove();
      Held start = turn.getValue().poll();
      heldCount--;
      if (!turn.getValue().isEmpty()) {
        held.put(turn.getKey(), turn.getValue());
      }
      start.startHeld(now);
    }
  }

  /** A probe started at {@code now}. */
  void started(long now) {
    advance(now);
    counts[slot(now / bucketMs)]++;
    size++;
  }

  /** The probe started at {@code startedAt} was answered (or gave up) at {@code now}. */
  void answered(long startedAt, long now) {
    advance(now);
    long bucket = startedAt / bucketMs;
    if (bucket > newest - counts.length && bucket <= newest && counts[slot(bucket)] > 0) {
      counts[slot(bucket)]--;
      size--;
    }
  }

  /** Unanswered probes started within the window before {@code now}. */
  int size(long now) {
    advance(now);
    return size;
  }

  /** When the oldest counted start leaves the window (a place frees up by then at the latest). */
  long nextExpiry(long now) {
    advance(now);
    return (newest + 1) * bucketMs;
  }

  private void advance(long now) {
    long bucket = now / bucketMs;
    if (bucket <= newest) {
      return;
    }
    if (newest == Long.MIN_VALUE || bucket - newest >= counts.length) {
      Arrays.fill(counts, 0);
      size = 0;
    } else {
      for (long b = newest + 1; b <= bucket; b++) {
        size -= counts[slot(b)];
        counts[slot(b)] = 0;
      }
    }
    newest = bucket;
  }

  private int slot(long bucket) {
    return (int) Math.floorMod(bucket, (long) counts.length);
  }
}
