package dev.vigil.probe;

import java.util.Arrays;

/**
 * The {@link ProbeScheduler}'s planned starts, earliest first (then in the order they were queued,
 * as separate timers of equal deadline would run), so one timer serves every backend of a scheduler
 * instead of one timer per backend. An indexed binary min-heap: each entry knows its slot, so add,
 * remove and poll are O(log n) and peeking the next start is O(1). Not thread-safe: the scheduler's
 * context only.
 */
final class StartQueue {

  /** A backend's place in the queue: when it is due, and its slot (-1 when not queued). */
  abstract static class Entry {
    long due;
    private long order;
    private int slot = -1;

    boolean queued() {
      return slot >= 0;
    }
  }

  private Entry[] heap = new Entry[16];
  private int size;
  private long queuedCount;

  boolean isEmpty() {
    return size == 0;
  }

  /** The earliest due time, or {@link Long#MAX_VALUE} when empty. */
  long nextDue() {
    return size == 0 ? Long.MAX_VALUE : heap[0].due;
  }

  /** Queues {@code e} (not queued) at {@code due}. */
  void add(Entry e, long due) {
    if (size == heap.length) {
      heap = Arrays.copyOf(heap, size * 2);
    }
    e.due = due;
    e.order = queuedCount++;
    heap[size] = e;
    e.slot = size;
    size++;
    siftUp(e.slot);
  }

  /** Takes {@code e} out of the queue; nothing when it is not queued. */
  void remove(Entry e) {
    int i = e.slot;
    if (i < 0) {
      return;
    }
    size--;
    Entry last = heap[size];
    heap[size] = null;
    e.slot = -1;
    if (i == size) {
      shrink();
      return;
    }
    heap[i] = last;
    last.slot = i;
    siftDown(i);
    siftUp(last.slot);
    shrink();
  }

  /** Takes out and returns the earliest entry; only when not {@link #isEmpty()}. */
  Entry poll() {
    Entry first = heap[0];
    remove(first);
    return first;
  }

  /** Gives memory back once most backends are gone (a pool scaled down or removed). */
  private void shrink() {
    if (heap.length > 64 && size < heap.length / 4) {
      heap = Arrays.copyOf(heap, heap.length / 2);
    }
  }

  private static boolean before(Entry a, Entry b) {
    return a.due < b.due || (a.due == b.due && a.order < b.order);
  }

  private void siftUp(int i) {
    Entry e = heap[i];
    while (i > 0) {
      int parent = (i - 1) >>> 1;
      Entry p = heap[parent];
      if (!before(e, p)) {
        break;
      }
      heap[i] = p;
      p.slot = i;
      i = parent;
    }
    heap[i] = e;
    e.slot = i;
  }

  private void siftDown(int i) {
    Entry e = heap[i];
    int half = size >>> 1;
    while (i < half) {
      int child = 2 * i + 1;
      int right = child + 1;
      if (right < size && before(heap[right], heap[child])) {
        child = right;
      }
      Entry c = heap[child];
      if (!before(c, e)) {
        break;
      }
      heap[i] = c;
      c.slot = i;
      i = child;
    }
    heap[i] = e;
    e.slot = i;
  }
}
