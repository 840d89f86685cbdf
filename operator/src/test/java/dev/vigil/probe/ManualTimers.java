package dev.vigil.probe;

import java.util.Comparator;
import java.util.HashMap;
import java.util.Map;
import java.util.PriorityQueue;

/** {@link Timers} on a manual clock: nothing happens until the test advances time. */
public final class ManualTimers implements Timers {

  private record Task(long due, long id, Runnable run) {}

  private final PriorityQueue<Task> queue =
      new PriorityQueue<>(Comparator.comparingLong(Task::due).thenComparingLong(Task::id));
  private final Map<Long, Task> live = new HashMap<>();
  private long now;
  private long nextId;

  @Override
  public long nowMillis() {
    return now;
  }

  @Override
  public long schedule(long delayMillis, Runnable task) {
    if (delayMillis < 0) {
      throw new IllegalArgumentException("negative delay " + delayMillis);
    }
    Task t = new Task(now + delayMillis, nextId++, task);
    queue.add(t);
    live.put(t.id(), t);
    return t.id();
  }

  @Override
  public boolean cancel(long timerId) {
    return live.remove(timerId) != null;
  }

  @Override
  public void execute(Runnable task) {
    task.run();
  }

  @Override
  public long pending() {
    return live.size();
  }

  /** One backlog for every scheduler on these timers, as on one event loop. */
  private final Backlog backlog = Backlog.forLoop();

  @Override
  public Backlog backlog() {
    return backlog;
  }

  /** Runs every timer due up to {@code now + millis}, in order, with the clock at each due time. */
  public void advance(long millis) {
    long until = now + millis;
    while (!queue.isEmpty() && queue.peek().due() <= until) {
      Task t = queue.poll();
      if (live.remove(t.id()) != null) {
        now = t.due();
        t.run().run();
      }
    }
    now = until;
  }
}
