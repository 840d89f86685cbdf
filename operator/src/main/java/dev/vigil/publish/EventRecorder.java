package dev.vigil.publish;

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

  /** What was recorded, {@code times} times (a repeat counted at flush carries its count). */
  private record Recorded(
      ObjectReference pool, EventReason reason, String subject, String message, int times) {}

  private record RepeatKey(String namespace, String pool, EventReason reason, String subject) {}

  /** Repeats of one record since the last flush: a counter, never a queue entry per repeat. */
  private static final class Repeats {
    final ObjectReference pool;
    final String message;
    final java.util.concurrent.atomic.AtomicInteger count =
        new java.util.concurrent.atomic.AtomicInteger();

    Repeats(ObjectReference pool, String message) {
      this.pool = pool;
      this.message = message;
    }
  }

  private record Key(String namespace, String pool, EventReason reason) {}

  private static final class Budget {
    long windowStart;
    int used;
    int suppressed;
  }

  private final Queue<Recorded> queue = new ConcurrentLinkedQueue<>();
  private final Map<RepeatKey, Repeats> repeats = new java.util.concurrent.ConcurrentHashMap<>();
  private final Queue<String> forgotten = new ConcurrentLinkedQueue<>();
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
    queue.add(new Recorded(pool, reason, subject, message, 1));
  }

  /**
   * Counts one more of a record that repeats at a high rate (an ejection the cap refuses again on
   * every error): cheap and bounded, one counter per subject until the next flush, which reports
   * the count in that pool's Event of this reason.
   */
  public void repeat(ObjectReference pool, EventReason reason, String subject, String message) {
    repeats
        .computeIfAbsent(
            new RepeatKey(pool.getNamespace(), pool.getName(), reason, subject),
            k -> new Repeats(pool, message))
        .count
        .incrementAndGet();
  }

  /** Records queued and not flushed yet (tests). */
  int queued() {
    return queue.size();
  }

  /** Pools with a rate budget (tests). */
  int pools() {
    return budgets.size();
  }

  /** Emits what was recorded since the last flush; returns how many Events went out. */
  public int flush(long nowMs) {
    int emitted = 0;
    for (List<Recorded> group : drainGroups().values()) {
      if (emit(group, nowMs)) {
        emitted++;
      }
    }
    for (String pool; (pool = forgotten.poll()) != null; ) {
      budgets.remove(pool);
    }
    return emitted;
  }

  /** What was recorded and repeated since the last flush, grouped by pool and reason. */
  private Map<Key, List<Recorded>> drainGroups() {
    Map<Key, List<Recorded>> groups = new LinkedHashMap<>();
    for (Recorded r; (r = queue.poll()) != null; ) {
      groups
          .computeIfAbsent(
              new Key(r.pool().getNamespace(), r.pool().getName(), r.reason()),
              k -> new ArrayList<>())
          .add(r);
    }
    for (RepeatKey k : List.copyOf(repeats.keySet())) {
      Repeats r = repeats.remove(k);
      int n = r == null ? 0 : r.count.get();
      if (n > 0) {
        groups
            .computeIfAbsent(new Key(k.namespace(), k.pool(), k.reason()), x -> new ArrayList<>())
            .add(new Recorded(r.pool, k.reason(), k.subject(), r.message, n));
      }
    }
    return groups;
  }

  /** Hands one group's Event to the sink if the pool's budget allows; else counts it held back. */
  private boolean emit(List<Recorded> group, long nowMs) {
    Recorded first = group.get(0);
    Budget budget =
        budgets.computeIfAbsent(
            first.pool().getNamespace() + "/" + first.pool().getName(), k -> new Budget());
    if (nowMs - budget.windowStart >= windowMs) {
      budget.windowStart = nowMs;
      budget.used = 0;
    }
    int times = group.stream().mapToInt(Recorded::times).sum();
    if (budget.used >= burst) {
      budget.suppressed += times;
      return false;
    }
    budget.used++;
    String message = message(group, budget.suppressed);
    budget.suppressed = 0;
    sink.accept(event(first, times, message, nowMs));
    return true;
  }

  /**
   * Forgets the rate budget of a deleted pool, at the next flush (after its last Events went out);
   * safe from any thread.
   */
  public void forget(String namespace, String pool) {
    forgotten.add(namespace + "/" + pool);
  }

  /**
   * One Event's message: the backends a group names, each once. A backend that flips several times
   * within one flush is one backend with its latest reason and how many times it was recorded; the
   * count in front is of distinct backends, never of records.
   */
  static String message(List<Recorded> group, int suppressedBefore) {
    Map<String, String> latest = new LinkedHashMap<>();
    Map<String, Integer> times = new HashMap<>();
    for (Recorded r : group) {
      String subject = r.subject() == null ? "pool" : r.subject();
      latest.remove(subject);
      latest.put(subject, r.message());
      times.merge(subject, r.times(), Integer::sum);
    }
    StringBuilder sb = new StringBuilder();
    if (latest.size() == 1) {
      oneSubject(sb, group);
    } else {
      manySubjects(sb, latest, times);
    }
    if (suppressedBefore > 0) {
      sb.append("; ")
          .append(suppressedBefore)
          .append(" earlier transitions not reported (rate limit)");
    }
    return sb.length() > 1024 ? sb.substring(0, 1021) + "..." : sb.toString();
  }

  /** One backend (or the pool): its latest record, and how many times it was recorded. */
  private static void oneSubject(StringBuilder sb, List<Recorded> group) {
    int total = group.stream().mapToInt(Recorded::times).sum();
    Recorded r = group.get(group.size() - 1);
    sb.append(r.subject() == null ? r.message() : r.subject() + ": " + r.message());
    if (total > 1) {
      sb.append(" (").append(total).append(" times)");
    }
  }

  /**
   * Several: how many, the first {@link #NAMES_PER_EVENT} with their latest reason and count, and
   * how many more.
   */
  private static void manySubjects(
      StringBuilder sb, Map<String, String> latest, Map<String, Integer> times) {
    sb.append(latest.size()).append(" backends: ");
    int shown = 0;
    for (Map.Entry<String, String> e : latest.entrySet()) {
      if (shown == NAMES_PER_EVENT) {
        break;
      }
      if (shown++ > 0) {
        sb.append(", ");
      }
      int n = times.get(e.getKey());
      sb.append(e.getKey())
          .append(" (")
          .append(e.getValue())
          .append(n > 1 ? ", " + n + " times" : "")
          .append(')');
    }
    if (latest.size() > shown) {
      sb.append(" and ").append(latest.size() - shown).append(" more");
    }
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
