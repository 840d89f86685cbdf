package dev.vigil.health;

/** The damped backends of one pool, ordered by when they are released (DESIGN §2.1). */
final class ReleaseDeadlines extends DeadlineHeap {
  @Override
  long deadline(Backend b) {
    return b.releaseAt;
  }

  @Override
  int index(Backend b) {
    return b.releaseIndex;
  }

  @Override
  void index(Backend b, int i) {
    b.releaseIndex = i;
  }
}
