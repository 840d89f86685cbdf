package dev.vigil.health;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The backends of one {@link PoolHealth}: in a dense array ({@link Backend#index}) that the
 * snapshot walks, and by id; O(1) add and remove (the last member takes the removed one's place).
 * The index by id is made on the first lookup by id and kept in step from then on: a caller that
 * holds the handles and its own index (the runtime) never makes it, and so holds each backend in
 * one map.
 */
final class PoolMembers {
  private Map<String, Backend> byId;
  private Backend[] members = new Backend[16];
  private int size;
  private long nextSerial;

  /** The member with this id, or null. */
  Backend get(String id) {
    return index().get(id);
  }

  private Map<String, Backend> index() {
    if (byId == null) {
      byId = new HashMap<>(size + size / 3 + 1);
      for (int i = 0; i < size; i++) {
        byId.put(members[i].id, members[i]);
      }
    }
    return byId;
  }

  /**
   * Adds a new member of {@code pool}. The caller checked that {@code id} is absent, or keeps its
   * own index by id that says so; with the index made, a present id is refused.
   */
  Backend add(PoolHealth pool, String id) {
    if (byId != null && byId.containsKey(id)) {
      throw new IllegalArgumentException("backend " + id + " is already a member");
    }
    Backend b = new Backend(pool, id, nextSerial++);
    if (size == members.length) {
      members = Arrays.copyOf(members, size * 2);
    }
    b.index = size;
    members[size++] = b;
    if (byId != null) {
      byId.put(id, b);
    }
    return b;
  }

  /** Removes a member and detaches it from its pool. */
  void remove(Backend b) {
    Backend last = members[--size];
    members[b.index] = last;
    last.index = b.index;
    members[size] = null;
    if (byId != null) {
      byId.remove(b.id);
    }
    b.pool = null;
    b.index = -1;
  }

  /** Empties every member's failure window (a window of another size starts empty). O(n). */
  void dropWindows() {
    for (int i = 0; i < size; i++) {
      members[i].window = null;
    }
  }

  AvailabilitySnapshot snapshot(PoolLedger ledger) {
    return ledger.snapshot(members, size);
  }

  int size() {
    return size;
  }

  List<BackendView> views() {
    List<BackendView> out = new ArrayList<>(size);
    for (int i = 0; i < size; i++) {
      out.add(members[i].view());
    }
    return out;
  }
}
