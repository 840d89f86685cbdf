package dev.vigil.passive;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The intake's budget of body bytes in flight, shared fairly between source addresses (issue 31,
 * item 6). A request reserves its body's size before the body is read. When a reservation does not
 * fit, the source holding the most bytes yields: its largest reservation is taken back (its holder
 * is told, and answers 503 with Retry-After) as long as that source holds at least twice what the
 * asker would hold after the grant. So senders that keep large bodies open can fill the budget only
 * until a source with less asks: a reporter with a small batch is never refused because other
 * addresses hold the bytes, and the heap stays bounded by the budget.
 *
 * <p>Thread-safe: requests on any event loop reserve and release here.
 */
final class ByteShares {
  /** One reservation's holder: told once when its bytes were taken back. */
  interface Holder {
    void yielded();
  }

  private record Share(String source, long bytes) {}

  private final long budget;
  private final Map<Holder, Share> shares = new LinkedHashMap<>();
  private final Map<String, Long> bySource = new HashMap<>();
  private long held;

  ByteShares(long budget) {
    this.budget = budget;
  }

  /**
   * Reserves {@code bytes} for {@code holder} from {@code source}; false (nothing reserved) when
   * the budget is full and no source holds more than this one would.
   */
  boolean reserve(Holder holder, String source, long bytes) {
    Holder[] taken;
    synchronized (this) {
      java.util.List<Holder> yielding = new java.util.ArrayList<>();
      while (held + bytes > budget) {
        Holder victim = largestOfRichest(source, bytes);
        if (victim == null) {
          // Nothing taken back either: the victims chosen so far keep their bytes.
          return false;
        }
        yielding.add(victim);
        free(victim);
      }
      shares.put(holder, new Share(source, bytes));
      bySource.merge(source, bytes, Long::sum);
      held += bytes;
      taken = yielding.toArray(Holder[]::new);
    }
    for (Holder h : taken) {
      h.yielded();
    }
    return true;
  }

  /** Gives back what {@code holder} reserved (nothing when it holds nothing). */
  synchronized void release(Holder holder) {
    free(holder);
  }

  /** Bytes reserved now. */
  synchronized long held() {
    return held;
  }

  /**
   * The largest reservation of the source holding the most, if that source holds at least twice
   * what {@code asker} would hold after a grant of {@code bytes} (twice: sources holding about the
   * same do not take bytes from each other in turn); else null.
   */
  private Holder largestOfRichest(String asker, long bytes) {
    long mine = bySource.getOrDefault(asker, 0L) + bytes;
    String richest = null;
    long most = 0;
    for (Map.Entry<String, Long> e : bySource.entrySet()) {
      if (!e.getKey().equals(asker) && e.getValue() > most) {
        most = e.getValue();
        richest = e.getKey();
      }
    }
    if (richest == null) {
      return null;
    }
    Holder largest = null;
    long size = 0;
    for (Map.Entry<Holder, Share> e : shares.entrySet()) {
      if (e.getValue().source().equals(richest) && e.getValue().bytes() > size) {
        size = e.getValue().bytes();
        largest = e.getKey();
      }
    }
    return largest != null && most >= 2 * mine ? largest : null;
  }

  private void free(Holder holder) {
    Share s = shares.remove(holder);
    if (s == null) {
      return;
    }
    held -= s.bytes();
    bySource.computeIfPresent(s.source(), (k, v) -> v - s.bytes() <= 0 ? null : v - s.bytes());
  }
}
