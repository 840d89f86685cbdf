package dev.vigil.health;

import java.util.Arrays;

/**
 * Backends of one pool ordered by a deadline (then by the order they joined the pool, so expiry
 * order is deterministic). An indexed binary min-heap: each backend knows its slot, so add, remove
 * and poll are O(log n) and peeking the next deadline is O(1). {@link EjectionDeadlines} orders
 * ejection ends, {@link ReleaseDeadlines} the releases of damped backends.
 */
abstract class DeadlineHeap {
  private Backend[] heap = new Backend[16];
  private int size;

  int size() {
    return size;
  }

  /** The deadline of b that orders this heap. */
  abstract long deadline(Backend b);

  /** b's slot in this heap, -1 when absent. */
  abstract int index(Backend b);

  abstract void index(Backend b, int i);

  /** The earliest deadline, or {@link Long#MAX_VALUE} when the heap is empty. */
  long nextDeadline() {
    return size == 0 ? Long.MAX_VALUE : deadline(heap[0]);
  }

  /** The backend whose deadline comes first; only when {@link #size()} is above zero. */
  Backend peek() {
    return heap[0];
  }

  /** A copy of the members, in no particular order. */
  Backend[] members() {
    return Arrays.copyOf(heap, size);
  }

  void add(Backend b) {
    if (size == heap.length) {
      heap = Arrays.copyOf(heap, size * 2);
    }
    heap[size] = b;
    index(b, size);
    size++;
    siftUp(index(b));
  }

  void remove(Backend b) {
    int i = index(b);
    size--;
    Backend last = heap[size];
    heap[size] = null;
    index(b, -1);
    if (i == size) {
      return;
    }
    heap[i] = last;
    index(last, i);
    siftDown(i);
    siftUp(index(last));
  }

  private boolean before(Backend a, Backend b) {
    long da = deadline(a);
    long db = deadline(b);
    return da < db || (da == db && a.serial < b.serial);
  }

  private void siftUp(int i) {
    Backend b = heap[i];
    while (i > 0) {
      int parent = (i - 1) >>> 1;
      Backend p = heap[parent];
      if (!before(b, p)) {
        break;
      }
      heap[i] = p;
      index(p, i);
      i = parent;
    }
    heap[i] = b;
    index(b, i);
  }

  private void siftDown(int i) {
    Backend b = heap[i];
    int half = size >>> 1;
    while (i < half) {
      int child = 2 * i + 1;
      int right = child + 1;
      if (right < size && before(heap[right], heap[child])) {
        child = right;
      }
      Backend c = heap[child];
      if (!before(c, b)) {
        break;
      }
      heap[i] = c;
      index(c, i);
      i = child;
    }
    heap[i] = b;
    index(b, i);
  }
}
