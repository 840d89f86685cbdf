package dev.vigil.health;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The backends of one {@link PoolHealth}: by id, and in a dense array ({@link Backend#index}) that
 * the snapshot walks; O(1) add and remove (the last member takes the removed one's place).
 */
final class PoolMembers {
  private final Map<String, Backend> byId = new HashMap<>();
  private Backend[] members = new Backend[16];
  private int size;
  private long nextSerial;

  /** The member with this id, or null. */
  Backend get(String id) {
    return byId.get(id);
  }

  /** Adds a new member of {@code pool} (the caller checked that {@code id} is absent). */
  Backend add(PoolHealth pool, String id) {
    Backend b = new Backend(pool, id, nextSerial++);
    if (size == members.length) {
      members = Arrays.copyOf(members, size * 2);
    }
    b.index = size;
    members[size++] = b;
    byId.put(id, b);
    return b;
  }

  /** Removes a member and detaches it from its pool. */
  void remove(Backend b) {
    Backend last = members[--size];
    members[b.index] = last;
    last.index = b.index;
    members[size] = null;
    byId.remove(b.id);
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
