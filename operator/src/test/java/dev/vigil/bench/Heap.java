package dev.vigil.bench;

/** Heap in use after the collector has run: the before/after figure of the cache memory mains. */
final class Heap {
  private Heap() {}

  static long used() throws InterruptedException {
    for (int i = 0; i < 5; i++) {
      System.gc();
      Thread.sleep(100);
    }
    Runtime r = Runtime.getRuntime();
    return r.totalMemory() - r.freeMemory();
  }
}
