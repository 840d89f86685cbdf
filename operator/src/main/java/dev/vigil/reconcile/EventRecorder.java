package dev.vigil.reconcile;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.ObjectReference;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Consumer;

/**
 * Turns transitions into Kubernetes Events, aggregated per pool and reason and rate-limited per
 * pool, so a zone outage that takes 500 backends down becomes one {@code BackendDown} Event naming
 * the first few, not 500 Events.
 *
 * <p>{@link #record} is cheap and safe from any thread (it only enqueues); {@link #flush} runs on
 * one thread, groups what was recorded since the last flush, and hands at most {@code burst} Events
 * per pool per {@code windowMs} to the sink. What the limit holds back is counted and reported in
 * the pool's next Event.
 */
public final class EventRecorder {
  static final int NAMES_PER_EVENT = 10;

  private record Recorded(
      ObjectReference pool, EventReason reason, String subject, String message) {}

  private record Key(String namespace, String pool, EventReason reason) {}

  private static final class Budget {
    long windowStart;
    int used;
    int suppressed;
  }

  private final Queue<Recorded> queue = new ConcurrentLinkedQueue<>();
  private final Map<String, Budget> budgets = new HashMap<>();
  private final Consumer<Event> sink;
  private final String component;
  private final int burst;
  private final long windowMs;

  /**
   * @param sink writes one Event (to the API server, or a list in tests)
   * @param burst Events per pool per window
   */
  public EventRecorder(Consumer<Event> sink, String component, int burst, long windowMs) {
    this.sink = sink;
    this.component = component;
    this.burst = burst;
    this.windowMs = windowMs;
  }

  /**
   * @param pool the object the Event is about
   * @param subject what changed (a backend address), or null for pool-wide events
   * @param message the reason in words, e.g. {@code 3 failed probes: timeout}
   */
  public void record(ObjectReference pool, EventReason reason, String subject, String message) {
    queue.add(new Recorded(pool, reason, subject, message));
  }

  /** Emits what was recorded since the last flush; returns how many Events went out. */
  public int flush(long nowMs) {
    Map<Key, List<Recorded>> groups = new LinkedHashMap<>();
    for (Recorded r; (r = queue.poll()) != null; ) {
      groups
          .computeIfAbsent(
              new Key(r.pool().getNamespace(), r.pool().getName(), r.reason()),
              k -> new ArrayList<>())
          .add(r);
    }
    int emitted = 0;
    for (List<Recorded> group : groups.values()) {
      Recorded first = group.get(0);
      Budget budget =
          budgets.computeIfAbsent(
              first.pool().getNamespace() + "/" + first.pool().getName(), k -> new Budget());
      if (nowMs - budget.windowStart >= windowMs) {
        budget.windowStart = nowMs;
        budget.used = 0;
      }
      if (budget.used >= burst) {
        budget.suppressed += group.size();
        continue;
      }
      budget.used++;
      String message = message(group, budget.suppressed);
      budget.suppressed = 0;
      sink.accept(event(first, group.size(), message, nowMs));
      emitted++;
    }
    return emitted;
  }

  /** Forgets the rate budget of a deleted pool. */
  public void forget(String namespace, String pool) {
    budgets.remove(namespace + "/" + pool);
  }

  static String message(List<Recorded> group, int suppressedBefore) {
    StringBuilder sb = new StringBuilder();
    if (group.size() == 1) {
      Recorded r = group.get(0);
      sb.append(r.subject() == null ? r.message() : r.subject() + ": " + r.message());
    } else {
      sb.append(group.size()).append(" backends: ");
      int shown = Math.min(NAMES_PER_EVENT, group.size());
      for (int i = 0; i < shown; i++) {
        Recorded r = group.get(i);
        if (i > 0) {
          sb.append(", ");
        }
        sb.append(r.subject() == null ? "pool" : r.subject())
            .append(" (")
            .append(r.message())
            .append(')');
      }
      if (group.size() > shown) {
        sb.append(" and ").append(group.size() - shown).append(" more");
      }
    }
    if (suppressedBefore > 0) {
      sb.append("; ")
          .append(suppressedBefore)
          .append(" earlier transitions not reported (rate limit)");
    }
    return sb.length() > 1024 ? sb.substring(0, 1021) + "..." : sb.toString();
  }

  private Event event(Recorded first, int count, String message, long nowMs) {
    String ts = Instant.ofEpochMilli(nowMs).toString();
    ObjectReference pool = first.pool();
    return new EventBuilder()
        .withNewMetadata()
        .withGenerateName(pool.getName() + ".")
        .withNamespace(pool.getNamespace())
        .endMetadata()
        .withInvolvedObject(pool)
        .withReason(first.reason().name())
        .withType(first.reason().type())
        .withMessage(message)
        .withCount(count)
        .withFirstTimestamp(ts)
        .withLastTimestamp(ts)
        .withNewSource()
        .withComponent(component)
        .endSource()
        .build();
  }
}
