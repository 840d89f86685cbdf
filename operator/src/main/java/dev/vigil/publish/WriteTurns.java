package dev.vigil.publish;

import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Predicate;

/**
 * Whose turn it is at the write budget, pure (no clock, no threads; the budget locks around it):
 * waiters by priority, and within a priority one line per namespace. The next waiter is in the
 * highest priority that has any; within it, the oldest of the namespace whose turn it is, after
 * which that namespace goes to the back of the priority's line. Every write costs one token, so
 * this is deficit round robin with equal quanta: with n namespaces waiting, each gets one write in
 * every n, however many writes one of them has queued (issue 31: one tenant's flapping pools cannot
 * push another tenant's slice write behind theirs).
 *
 * @param <T> a waiter
 */
final class WriteTurns<T> {
  private final Map<String, ArrayDeque<T>>[] lines;
  private final int[] sizes;

  @SuppressWarnings("unchecked")
  WriteTurns(int priorities) {
    lines = new Map[priorities];
    sizes = new int[priorities];
    for (int p = 0; p < priorities; p++) {
      lines[p] = new LinkedHashMap<>();
    }
  }

  /** Queues {@code waiter} at the back of its namespace's line in {@code priority}. */
  void add(int priority, String namespace, T waiter) {
    lines[priority].computeIfAbsent(namespace, n -> new ArrayDeque<>()).add(waiter);
    sizes[priority]++;
  }

  /** Takes the waiter whose turn it is, or null when none waits. */
  T poll() {
    return poll(namespace -> true);
  }

  /**
   * Takes the waiter whose turn it is among the namespaces that may go now, or null when none of
   * theirs waits. A namespace passed over keeps its place at the front of its line.
   */
  T poll(Predicate<String> mayGo) {
    for (int p = 0; p < lines.length; p++) {
      if (sizes[p] == 0) {
        continue;
      }
      for (Iterator<Map.Entry<String, ArrayDeque<T>>> it = lines[p].entrySet().iterator();
          it.hasNext(); ) {
        Map.Entry<String, ArrayDeque<T>> turn = it.next();
        if (!mayGo.test(turn.getKey())) {
          continue;
        }
        it.remove();
        T waiter = turn.getValue().poll();
        sizes[p]--;
        if (!turn.getValue().isEmpty()) {
          lines[p].put(turn.getKey(), turn.getValue());
        }
        return waiter;
      }
    }
    return null;
  }

  /** Withdraws a waiter that gave up (interrupted); false when it was not queued. */
  boolean remove(int priority, String namespace, T waiter) {
    ArrayDeque<T> line = lines[priority].get(namespace);
    if (line == null || !line.remove(waiter)) {
      return false;
    }
    sizes[priority]--;
    if (line.isEmpty()) {
      lines[priority].remove(namespace);
    }
    return true;
  }

  /** Waiters queued in {@code priority}. */
  int size(int priority) {
    return sizes[priority];
  }

  boolean isEmpty() {
    for (int s : sizes) {
      if (s > 0) {
        return false;
      }
    }
    return true;
  }
}
