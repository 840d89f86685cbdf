package dev.vigil.runtime;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * A pool's tracked members in id order, in one array: found by binary search, listed in id order
 * for the view, 4 bytes per member where a {@code TreeMap} took 40 (issue 37, heap per backend).
 * Members join in batches ({@link #stage} then {@link #merge}, one sort of the batch and one pass),
 * so a pool of n new members costs O(n log n), not n insertions into an array. Touched only on the
 * pool's context.
 */
final class MembersById {
  private static final Comparator<TrackedBackend> BY_ID = Comparator.comparing(TrackedBackend::id);
  private static final TrackedBackend[] NONE = new TrackedBackend[0];

  private TrackedBackend[] sorted = NONE;
  private int size;

  /** Members staged to join at the next {@link #merge}, by id; null when none are. */
  private Map<String, TrackedBackend> staged;

  /** The member with this id, staged ones included; null when there is none. */
  TrackedBackend get(String id) {
    int lo = 0;
    int hi = size - 1;
    while (lo <= hi) {
      int mid = (lo + hi) >>> 1;
      int c = sorted[mid].id().compareTo(id);
      if (c < 0) {
        lo = mid + 1;
      } else if (c > 0) {
        hi = mid - 1;
      } else {
        return sorted[mid];
      }
    }
    return staged == null ? null : staged.get(id);
  }

  /** Members, staged ones included. */
  int size() {
    return size + (staged == null ? 0 : staged.size());
  }

  /** Stages a new member (its id is in neither list) to join at the next {@link #merge}. */
  void stage(TrackedBackend t) {
    if (staged == null) {
      staged = new HashMap<>();
    }
    staged.put(t.id(), t);
  }

  /** Drops every merged member that {@code leaves} accepts, in one pass, keeping the order. */
  void removeIf(Predicate<TrackedBackend> leaves) {
    int kept = 0;
    for (int i = 0; i < size; i++) {
      TrackedBackend t = sorted[i];
      if (!leaves.test(t)) {
        sorted[kept++] = t;
      }
    }
    Arrays.fill(sorted, kept, size, null);
    size = kept;
  }

  /** Lets the staged members join, in id order. */
  void merge() {
    if (staged == null) {
      return;
    }
    List<TrackedBackend> joining = new ArrayList<>(staged.values());
    joining.sort(BY_ID);
    staged = null;
    TrackedBackend[] merged = new TrackedBackend[size + joining.size()];
    int i = 0;
    int j = 0;
    int k = 0;
    while (i < size && j < joining.size()) {
      merged[k++] = BY_ID.compare(sorted[i], joining.get(j)) < 0 ? sorted[i++] : joining.get(j++);
    }
    while (i < size) {
      merged[k++] = sorted[i++];
    }
    while (j < joining.size()) {
      merged[k++] = joining.get(j++);
    }
    sorted = merged;
    size = merged.length;
  }

  /**
   * The merged members in id order: a read-only view of the array, valid until the next change (the
   * pool's context iterates it and copies what it hands to other threads).
   */
  List<TrackedBackend> inOrder() {
    return Collections.unmodifiableList(Arrays.asList(sorted).subList(0, size));
  }
}
