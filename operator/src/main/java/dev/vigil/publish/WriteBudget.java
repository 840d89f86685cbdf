package dev.vigil.publish;

import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;

/**
 * The operator's one client-side write budget ({@code --api-qps}, {@code --api-burst}): a token
 * bucket shared by every API write Vigil makes itself (docs/publishing.md lists them), handed out
 * in priority order. A writer of a lower priority gets a token only while no writer of a higher
 * priority waits, so a backlog of status writes or Events never delays a slice write, and no slice
 * backlog delays a handover (docs/design.md §3). Within one priority, namespaces take turns ({@link
 * WriteTurns}: round robin between namespaces, oldest first within one), so one tenant's backlog of
 * writes delays another tenant's write by at most one of its own per token (issue 31).
 *
 * <p>Lease writes never wait ({@link #leaseWrite}): a replica that misses its renew deadline stops
 * writing, so a renewal queued behind a drained bucket would fence a healthy replica. A Lease write
 * takes its token at once, borrowing it when the bucket is empty; the writers after it wait until
 * the debt is earned back, so the rate over time stays the budget's.
 *
 * <p>Thread-safe; {@link #acquire} blocks the calling writer thread (never an event loop). Time
 * comes from an injected nanosecond clock; {@link #wakeUp} makes waiters re-check it (tests with a
 * manual clock).
 */
public final class WriteBudget {
  /** Who writes; earlier constants go first. */
  public enum Priority {
    /** Shard Leases, the sharder's fences, the leader Lease's release: never wait. */
    LEASE,
    /** A pool's move: the sharder's label patch and the old owner's handover status. */
    HANDOVER,
    /** EndpointSlices and the managed Service: what traffic follows. */
    SLICE,
    /** BackendPool and HealthPolicy status. */
    STATUS,
    /** Kubernetes Events: reports, the first to wait. */
    EVENT
  }

  /** Time that earns one token. */
  private final long nanosPerToken;

  private final long capacity;
  private final LongSupplier nanos;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition();
  private final WriteTurns<Ticket> turns = new WriteTurns<>(Priority.values().length);
  private final long[] granted = new long[Priority.values().length];

  /** One waiting writer; {@code granted} is set (under the lock) when a token is its. */
  private static final class Ticket {
    final int priority;
    boolean granted;

    Ticket(int priority) {
      this.priority = priority;
    }
  }

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

  /** Takes one token for a write outside any namespace (or whose namespace does not matter). */
  public void acquire(Priority priority) throws InterruptedException {
    acquire(priority, "");
  }

  /**
   * Takes one token, waiting for it: for every waiter of a higher priority, and for the turns of
   * the other namespaces waiting in the same priority.
   *
   * @param namespace the namespace of the object written; its writes share one turn
   */
  public void acquire(Priority priority, String namespace) throws InterruptedException {
    if (priority == Priority.LEASE) {
      leaseWrite();
      return;
    }
    Ticket ticket = new Ticket(priority.ordinal());
    lock.lock();
    try {
      turns.add(ticket.priority, namespace, ticket);
      try {
        while (true) {
          grantTurns();
          if (ticket.granted) {
            return;
          }
          changed.awaitNanos(Math.max(1, nanosPerToken - credit));
        }
      } catch (InterruptedException e) {
        if (!turns.remove(ticket.priority, namespace, ticket)) {
          credit += nanosPerToken; // granted meanwhile: give the token back
          granted[ticket.priority]--;
        }
        throw e;
      }
    } finally {
      lock.unlock();
    }
  }

  /**
   * Takes one token for a Lease write, at once, whoever waits: borrowed when the bucket is empty
   * (its credit goes below zero), so every other writer waits until the debt is earned back.
   */
  public void leaseWrite() {
    lock.lock();
    try {
      refill();
      credit -= nanosPerToken;
      granted[Priority.LEASE.ordinal()]++;
    } finally {
      lock.unlock();
    }
  }

  /** Hands the tokens earned so far to the waiters whose turn it is, and wakes them. */
  private void grantTurns() {
    refill();
    boolean any = false;
    while (credit >= nanosPerToken && !turns.isEmpty()) {
      Ticket next = turns.poll();
      credit -= nanosPerToken;
      granted[next.priority]++;
      next.granted = true;
      any = true;
    }
    if (any) {
      changed.signalAll();
    }
  }

  private void refill() {
    long now = nanos.getAsLong();
    long elapsed = now - refilledAt;
    if (elapsed > 0) {
      if (credit < 0) { // a Lease write's debt (capacity - credit could overflow)
        credit = Math.min(capacity, credit + elapsed);
      } else {
        credit = capacity - credit <= elapsed ? capacity : credit + elapsed;
      }
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
      return turns.size(priority.ordinal());
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
