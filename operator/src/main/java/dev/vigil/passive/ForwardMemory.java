package dev.vigil.passive;

import io.vertx.core.Promise;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.function.LongSupplier;

/**
 * An owner's memory of the outcomes it took (docs/passive.md, "Routing between replicas" and
 * "Sending a batch again"): a slot and its answer, being applied or applied, for {@code rememberMs}
 * (and at most {@code capacity} slots, the oldest forgotten first), so outcomes sent again after
 * their answer was lost get that answer and are not applied twice. A slot is a forwarded part's id
 * per sender ({@link #slot}) or, when the reporter sent an {@link IdempotencyKey}, that key's slot:
 * the same for every replica the reporter's retries reach. Outcomes the owner did not apply (the
 * pool does not run here) are forgotten at once: nothing of them was applied, and the next try may
 * find the pool here.
 */
final class ForwardMemory {
  /**
   * What a slot finds: its answer so far, whether it is new (then the caller applies and completes
   * the answer), and whether it was taken with another body (an idempotency key reused: the caller
   * applies nothing).
   */
  record Recall(Promise<ForwardedOutcomes.PartAnswer> answer, boolean fresh, boolean conflict) {}

  private record Entry(long at, String fingerprint, Promise<ForwardedOutcomes.PartAnswer> answer) {}

  private final long rememberMs;
  private final int capacity;
  private final LongSupplier clock;
  private final Map<String, Entry> entries = new LinkedHashMap<>();
  private long forgottenEarly;

  ForwardMemory(long rememberMs, int capacity, LongSupplier clock) {
    this.rememberMs = rememberMs;
    this.capacity = capacity;
    this.clock = clock;
  }

  /** The slot of a part {@code sender} forwarded: its idempotency key's, else its id's. */
  static String slot(String sender, ForwardedOutcomes.Part part) {
    return part.key() != null ? key(part.key()) : sender + "/" + part.id();
  }

  /** The slot of a reporter's idempotency key. */
  static String key(String keySlot) {
    return "key/" + keySlot;
  }

  /** The answer remembered for {@code slot}, or a fresh promise the caller completes. */
  synchronized Recall recall(String slot, String fingerprint) {
    long now = clock.getAsLong();
    expire(now);
    Entry e = entries.get(slot);
    if (e != null) {
      boolean conflict =
          e.fingerprint() != null
              && fingerprint != null
              && !Objects.equals(e.fingerprint(), fingerprint);
      return new Recall(e.answer(), false, conflict);
    }
    Promise<ForwardedOutcomes.PartAnswer> answer = Promise.promise();
    entries.put(slot, new Entry(now, fingerprint, answer));
    return new Recall(answer, true, false);
  }

  /** Forgets outcomes that were not applied. */
  synchronized void forget(String slot) {
    entries.remove(slot);
  }

  synchronized int size() {
    return entries.size();
  }

  /**
   * Slots forgotten for room before {@code rememberMs} had passed (a repeat of one would apply).
   */
  synchronized long forgottenEarly() {
    return forgottenEarly;
  }

  private void expire(long now) {
    Iterator<Entry> it = entries.values().iterator();
    while (it.hasNext()) {
      Entry oldest = it.next();
      boolean old = now - oldest.at() >= rememberMs;
      if (!old && entries.size() < capacity) {
        return;
      }
      if (!old) {
        forgottenEarly++;
      }
      it.remove();
    }
  }
}
