package dev.vigil.probe;

import dev.vigil.health.DeadlineHeap;

/**
 * The {@link ProbeScheduler}'s planned starts, earliest first (then in the order they were queued,
 * as separate timers of equal deadline would run), so one timer serves every backend of a scheduler
 * instead of one timer per backend. Not thread-safe: the scheduler's context only.
 */
final class StartQueue extends DeadlineHeap<StartQueue.Entry> {

  /** A backend's place in the queue: when it is due, and its slot (-1 when not queued). */
  abstract static class Entry {
    long due;
    private long order;
    private int slot = -1;

    boolean queued() {
      return slot >= 0;
    }
  }

  private long queuedCount;

  boolean isEmpty() {
    return size() == 0;
  }

  /** The earliest due time, or {@link Long#MAX_VALUE} when empty. */
  long nextDue() {
    return nextDeadline();
  }

  /** Queues {@code e} (not queued) at {@code due}. */
  void add(Entry e, long due) {
    e.due = due;
    e.order = queuedCount++;
    add(e);
  }

  /** Takes {@code e} out of the queue; nothing when it is not queued. */
  void dequeue(Entry e) {
    if (e.queued()) {
      remove(e);
    }
  }

  /** Takes out and returns the earliest entry; only when not {@link #isEmpty()}. */
  Entry poll() {
    Entry first = peek();
    remove(first);
    return first;
  }

  @Override
  protected long deadline(Entry e) {
    return e.due;
  }

  @Override
  protected long order(Entry e) {
    return e.order;
  }

  @Override
  protected int index(Entry e) {
    return e.slot;
  }

  @Override
  protected void index(Entry e, int i) {
    e.slot = i;
  }
}
