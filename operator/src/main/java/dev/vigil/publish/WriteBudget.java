package dev.vigil.publish;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;

/**
 * The operator's one client-side write budget ({@code --api-qps}, {@code --api-burst}): a token
 * bucket shared by every API write, handed out in priority order. A writer of a lower priority gets
 * a token only while no writer of a higher priority waits, so a backlog of status writes or Events
 * never delays a slice write (docs/design.md §3). Within one priority, waiters are served as the
 * lock allows (no strict FIFO: every waiter of one priority is equivalent).
 *
 * <p>Thread-safe; {@link #acquire} blocks the calling writer thread (never an event loop). Time
 * comes from an injected nanosecond clock; {@link #wakeUp} makes waiters re-check it (tests with a
 * manual clock).
 */
public final class WriteBudget {
  /** Who writes; earlier constants go first. */
  public enum Priority {
    SLICE,
    STATUS,
    EVENT
  }

  /** Time that earns one token. */
  private final long nanosPerToken;

  private final long capacity;
  private final LongSupplier nanos;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition();
  private final int[] waiting = new int[Priority.values().length];
  private final long[] granted = new long[Priority.values().length];

  /** Earned time, in nanoseconds: whole tokens are credit / nanosPerToken (exact, no rounding). */
  private long credit;

  private long refilledAt;

  /**
   * @param qps tokens per second, > 0
   * @param burst bucket size (>= 1); the bucket starts full
   */
  public WriteBudget(double qps, int burst, LongSupplier nanos) {
    if (!(qps > 0) || burst < 1) {
      throw new IllegalArgumentException("qps must be > 0 and burst >= 1");
    }
    this.nanosPerToken = Math.max(1, Math.round(1e9 / qps));
    long cap;
    try {
      cap = Math.multiplyExact(nanosPerToken, (long) burst);
    } catch (ArithmeticException e) {
      cap = Long.MAX_VALUE;
    }
    this.capacity = cap;
    this.nanos = nanos;
    this.credit = capacity;
    this.refilledAt = nanos.getAsLong();
  }

  /** Takes one token, waiting for it (and for every higher-priority waiter) when needed. */
  public void acquire(Priority priority) throws InterruptedException {
    int p = priority.ordinal();
    lock.lock();
    try {
      waiting[p]++;
      try {
        while (true) {
          refill();
          if (credit >= nanosPerToken && !higherWaiting(p)) {
            credit -= nanosPerToken;
            granted[p]++;
            return;
          }
          long waitNanos =
              credit >= nanosPerToken ? TimeUnit.MILLISECONDS.toNanos(50) : nanosPerToken - credit;
          changed.awaitNanos(Math.max(1, waitNanos));
        }
      } finally {
        waiting[p]--;
        changed.signalAll();
      }
    } finally {
      lock.unlock();
    }
  }

  private boolean higherWaiting(int p) {
    for (int i = 0; i < p; i++) {
      if (waiting[i] > 0) {
        return true;
      }
    }
    return false;
  }

  private void refill() {
    long now = nanos.getAsLong();
    long elapsed = now - refilledAt;
    if (elapsed > 0) {
      credit = capacity - credit <= elapsed ? capacity : credit + elapsed;
      refilledAt = now;
    }
  }

  /** Makes every waiter re-check the clock (for an injected clock that was moved). */
  public void wakeUp() {
    lock.lock();
    try {
      changed.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /** Writers waiting now, of one priority. */
  public int waiting(Priority priority) {
    lock.lock();
    try {
      return waiting[priority.ordinal()];
    } finally {
      lock.unlock();
    }
  }

  /** Tokens handed out so far, of one priority. */
  public long granted(Priority priority) {
    lock.lock();
    try {
      return granted[priority.ordinal()];
    } finally {
      lock.unlock();
    }
  }

  /** No limit worth the name: for tools and tests that must not wait. */
  public static WriteBudget unlimited() {
    return new WriteBudget(1e9, 1_000_000_000, System::nanoTime);
  }
}
