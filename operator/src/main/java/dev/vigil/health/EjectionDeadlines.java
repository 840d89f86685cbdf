package dev.vigil.health;

/** The ejected backends of one pool, ordered by when their ejection ends. */
final class EjectionDeadlines extends DeadlineHeap<Backend> {
  @Override
  protected long deadline(Backend b) {
    return b.ejectedUntil;
  }

  @Override
  protected long order(Backend b) {
    return b.serial;
  }

  @Override
  protected int index(Backend b) {
    return b.heapIndex;
  }

  @Override
  protected void index(Backend b, int i) {
    b.heapIndex = i;
  }
}
