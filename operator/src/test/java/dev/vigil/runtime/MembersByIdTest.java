package dev.vigil.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * The runtime's members in one id-ordered array (issue 37) against the {@code TreeMap} it replaced:
 * after random batches of joins and leaves, the same members, found by id, listed in id order.
 */
class MembersByIdTest {
  private static TrackedBackend member(String id) {
    return new TrackedBackend(
        Member.of(id, "u", "10.0.0.1", 8080, null, null, false, false, List.of()), null, 0);
  }

  @Test
  void matchesATreeMapThroughRandomBatches() {
    SplittableRandom random = new SplittableRandom(37);
    MembersById members = new MembersById();
    Map<String, TrackedBackend> reference = new TreeMap<>();
    for (int batch = 0; batch < 500; batch++) {
      // leaves: each member with a chance that changes from batch to batch
      int leaveOneIn = 1 + random.nextInt(8);
      Set<String> leaving = new HashSet<>();
      for (String id : reference.keySet()) {
        if (random.nextInt(leaveOneIn) == 0) {
          leaving.add(id);
        }
      }
      members.removeIf(t -> leaving.contains(t.id()));
      reference.keySet().removeAll(leaving);
      // joins: new ids (some sorting before, between and after the present ones), found at once
      int joining = random.nextInt(12);
      for (int j = 0; j < joining; j++) {
        String id = "web-" + random.nextInt(200);
        if (reference.containsKey(id)) {
          assertSame(reference.get(id), members.get(id), id);
          continue;
        }
        TrackedBackend t = member(id);
        members.stage(t);
        reference.put(id, t);
        assertSame(t, members.get(id), "a staged member is found before the merge");
      }
      assertEquals(reference.size(), members.size());
      members.merge();

      assertEquals(
          new ArrayList<>(reference.keySet()),
          members.inOrder().stream().map(TrackedBackend::id).toList(),
          "batch " + batch);
      assertEquals(new ArrayList<>(reference.values()), members.inOrder());
      assertEquals(reference.size(), members.size());
      for (int k = 0; k < 200; k++) {
        String id = "web-" + k;
        assertSame(reference.get(id), members.get(id), id);
      }
    }
  }

  @Test
  void anEmptyListFindsNothing() {
    MembersById members = new MembersById();
    assertNull(members.get("web-0"));
    assertEquals(List.of(), members.inOrder());
    members.merge();
    assertEquals(0, members.size());
  }

  @Test
  void itsListIsReadOnly() {
    MembersById members = new MembersById();
    members.stage(member("web-0"));
    members.merge();
    assertThrows(UnsupportedOperationException.class, () -> members.inOrder().remove(0));
  }
}
