package dev.vigil.health;

import java.util.Arrays;

/**
 * The ejected backends of one pool, ordered by when their ejection ends (then by the order they
 * joined the pool, so expiry order is deterministic). An indexed binary min-heap: each backend
 * knows its slot, so add, remove and poll are O(log n) and peeking the next deadline is O(1).
 */
final class EjectionDeadlines {
  private Backend[] heap = new Backend[16];
  private int size;

  int size() {
    return size;
  }

  /** The earliest deadline, or {@link Long#MAX_VALUE} when nobody is ejected. */
  long nextDeadline() {
    return size == 0 ? Long.MAX_VALUE : heap[0].ejectedUntil;
  }

  /** The backend whose ejection ends first; only when {@link #size()} is above zero. */
  Backend peek() {
    return heap[0];
  }

  void add(Backend b) {
    if (size == heap.length) {
      heap = Arrays.copyOf(heap, size * 2);
    }
    heap[size] = b;
    b.heapIndex = size;
    size++;
    siftUp(b.heapIndex);
  }

  void remove(Backend b) {
    int i = b.heapIndex;
    size--;
    Backend last = heap[size];
    heap[size] = null;
    b.heapIndex = -1;
    if (i == size) {
      return;
    }
    heap[i] = last;
    last.heapIndex = i;
    siftDown(i);
    siftUp(last.heapIndex);
  }

  private static boolean before(Backend a, Backend b) {
    return a.ejectedUntil < b.ejectedUntil
        || (a.ejectedUntil == b.ejectedUntil && a.serial < b.serial);
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
      p.heapIndex = i;
      i = parent;
    }
    heap[i] = b;
    b.heapIndex = i;
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
      c.heapIndex = i;
      i = child;
    }
    heap[i] = b;
    b.heapIndex = i;
  }
}
