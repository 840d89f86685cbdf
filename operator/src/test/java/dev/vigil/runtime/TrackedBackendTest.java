package dev.vigil.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * What few backends have (a dry run, the voters' answers) is kept apart and only while it holds
 * something (issue 37): the defaults read the same without it.
 */
class TrackedBackendTest {
  private final TrackedBackend t =
      new TrackedBackend(
          Member.of("web-0", "u", "10.0.0.1", 8080, null, null, false, false, List.of()), null, 0);

  @Test
  void readsTheDefaultsWithoutNotes() {
    assertNull(t.wouldEject());
    assertEquals(0, t.wouldEjectUntil());
    assertNull(t.lastVotes());
    assertEquals(Long.MIN_VALUE, t.confirmAskedAt());
    assertFalse(t.hasNotes());
  }

  @Test
  void keepsADryRunUntilItIsClearedThenDropsTheNotes() {
    t.wouldEject("would eject: 5 errors", 30_000);
    assertEquals("would eject: 5 errors", t.wouldEject());
    assertEquals(30_000, t.wouldEjectUntil());
    assertTrue(t.hasNotes());

    t.clearWouldEject();
    assertNull(t.wouldEject());
    assertEquals(0, t.wouldEjectUntil());
    assertFalse(t.hasNotes(), "a backend whose dry run ended carries no notes");
  }

  @Test
  void keepsVotesAndWhenTheyWereAskedBesideADryRun() {
    Confirmer.Votes votes = new Confirmer.Votes(List.of("zone-b"), List.of(), List.of());
    t.confirmAskedAt(5_000);
    t.lastVotes(votes);
    t.wouldEject("dry", 9_000);
    t.clearWouldEject();
    assertEquals(votes, t.lastVotes());
    assertEquals(5_000, t.confirmAskedAt());
    assertTrue(t.hasNotes());

    t.lastVotes(null);
    assertNull(t.lastVotes());
    assertTrue(t.hasNotes(), "still asked at 5,000");
  }
}
