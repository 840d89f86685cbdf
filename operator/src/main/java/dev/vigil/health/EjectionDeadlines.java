package dev.vigil.health;

/** The ejected backends of one pool, ordered by when their ejection ends. */
final class EjectionDeadlines extends DeadlineHeap {
  @Override
  long deadline(Backend b) {
    return b.ejectedUntil;
  }

  @Override
  int index(Backend b) {
    return b.heapIndex;
  }

  @Override
  void index(Backend b, int i) {
    b.heapIndex = i;
  }
}
