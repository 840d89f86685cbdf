package dev.vigil.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.MemoryUsage;

/** Heap in use after the collector has run: the before/after figure of the memory mains. */
public final class Heap {
  private Heap() {}

  /**
   * Used heap a moment after full collections. Counts what was allocated since the last one too:
   * steady only when nothing else allocates (the cache mains).
   */
  static long used() throws InterruptedException {
    for (int i = 0; i < 5; i++) {
      System.gc();
      Thread.sleep(100);
    }
    Runtime r = Runtime.getRuntime();
    return r.totalMemory() - r.freeMemory();
  }

  /**
   * Live heap: each heap pool's usage right after its last collection, after full collections.
   * Unlike {@link #used()} it leaves out what running threads (a prober's event loop at thousands
   * of probes per second) allocate between the collection and the reading.
   */
  public static long liveAfterGc() throws InterruptedException {
    for (int i = 0; i < 3; i++) {
      System.gc();
      Thread.sleep(100);
    }
    long live = 0;
    for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
      MemoryUsage afterGc = pool.getCollectionUsage();
      if (pool.getType() == MemoryType.HEAP && afterGc != null) {
        live += afterGc.getUsed();
      }
    }
    return live;
  }
}
