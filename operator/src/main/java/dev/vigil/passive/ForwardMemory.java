package dev.vigil.passive;

import io.vertx.core.Promise;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * An owner's memory of the forwarded parts it took (docs/passive.md, "Routing between replicas"): a
 * part's id and its answer, being applied or applied, for {@code rememberMs} (and at most {@code
 * capacity} ids, the oldest forgotten first), so a part sent again after its answer was lost gets
 * that answer and is not applied twice. A part the owner did not apply (the pool does not run here)
 * is forgotten at once: nothing of it was applied, and the next try may find the pool here.
 */
final class ForwardMemory {
  /** What a part's id finds: its answer so far, and whether it is new (then the caller applies). */
  record Recall(Promise<ForwardedOutcomes.PartAnswer> answer, boolean fresh) {}

  private record Entry(long at, Promise<ForwardedOutcomes.PartAnswer> answer) {}

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

  /** The answer remembered for {@code id}, or a fresh promise the caller completes. */
  synchronized Recall recall(String sender, String id) {
    long now = clock.getAsLong();
    expire(now);
    String key = sender + "/" + id;
    Entry e = entries.get(key);
    if (e != null) {
      return new Recall(e.answer(), false);
    }
    Promise<ForwardedOutcomes.PartAnswer> answer = Promise.promise();
    entries.put(key, new Entry(now, answer));
    return new Recall(answer, true);
  }

  /** Forgets a part that was not applied. */
  synchronized void forget(String sender, String id) {
    entries.remove(sender + "/" + id);
  }

  synchronized int size() {
    return entries.size();
  }

  /** Ids forgotten for room before {@code rememberMs} had passed (a repeat of one would apply). */
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
