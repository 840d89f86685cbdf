package dev.vigil.health;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Entries ordered by a deadline, then by an order of their own (the order backends joined the pool,
 * the order starts were queued), so expiry order is deterministic. An indexed binary min-heap: each
 * entry knows its slot, so add, remove and poll are O(log n) and peeking the next deadline is O(1).
 * {@link EjectionDeadlines} orders ejection ends, {@link ReleaseDeadlines} the releases of damped
 * backends, the probe scheduler's start queue the planned probe starts. Not thread-safe.
 *
 * @param <E> the entries; one entry may sit in several heaps, each with its own slot field
 */
public abstract class DeadlineHeap<E> {
  private Object[] heap = new Object[16];
  private int size;

  public int size() {
    return size;
  }

  /** The deadline of e that orders this heap. */
  protected abstract long deadline(E e);

  /** What orders entries of equal deadline: the smaller first. */
  protected abstract long order(E e);

  /** e's slot in this heap, -1 when absent. */
  protected abstract int index(E e);

  protected abstract void index(E e, int i);

  /** The earliest deadline, or {@link Long#MAX_VALUE} when the heap is empty. */
  public long nextDeadline() {
    return size == 0 ? Long.MAX_VALUE : deadline(at(0));
  }

  /** The entry whose deadline comes first; only when {@link #size()} is above zero. */
  public E peek() {
    return at(0);
  }

  /** A copy of the members, in no particular order. */
  public List<E> members() {
    List<E> out = new ArrayList<>(size);
    for (int i = 0; i < size; i++) {
      out.add(at(i));
    }
    return out;
  }

  /** Adds e, which is not in this heap. */
  public void add(E e) {
    if (size == heap.length) {
      heap = Arrays.copyOf(heap, size * 2);
    }
    heap[size] = e;
    index(e, size);
    size++;
    siftUp(index(e));
  }

  /** Removes e, which is in this heap. */
  public void remove(E e) {
    int i = index(e);
    size--;
    E last = at(size);
    heap[size] = null;
    index(e, -1);
    if (i < size) {
      heap[i] = last;
      index(last, i);
      siftDown(i);
      siftUp(index(last));
    }
    if (heap.length > 64 && size < heap.length / 4) {
      heap = Arrays.copyOf(heap, heap.length / 2); // most entries gone: give memory back
    }
  }

  @SuppressWarnings("unchecked")
  private E at(int i) {
    return (E) heap[i];
  }

  private boolean before(E a, E b) {
    long da = deadline(a);
    long db = deadline(b);
    return da < db || (da == db && order(a) < order(b));
  }

  private void siftUp(int i) {
    E e = at(i);
    while (i > 0) {
      int parent = (i - 1) >>> 1;
      E p = at(parent);
      if (!before(e, p)) {
        break;
      }
      heap[i] = p;
      index(p, i);
      i = parent;
    }
    heap[i] = e;
    index(e, i);
  }

  private void siftDown(int i) {
    E e = at(i);
    int half = size >>> 1;
    while (i < half) {
      int child = 2 * i + 1;
      int right = child + 1;
      if (right < size && before(at(right), at(child))) {
        child = right;
      }
      E c = at(child);
      if (!before(c, e)) {
        break;
      }
      heap[i] = c;
      index(c, i);
      i = child;
    }
    heap[i] = e;
    index(e, i);
  }
}
