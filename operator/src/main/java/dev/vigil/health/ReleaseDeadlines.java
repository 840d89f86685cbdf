package dev.vigil.health;

/** The damped backends of one pool, ordered by when they are released (docs/design.md §2.1). */
final class ReleaseDeadlines extends DeadlineHeap<Backend> {
  @Override
  protected long deadline(Backend b) {
    return b.merit.releaseAt;
  }

  @Override
  protected long order(Backend b) {
    return b.serial;
  }

  @Override
  protected int index(Backend b) {
    return b.merit == null ? -1 : b.merit.releaseIndex;
  }

  @Override
  protected void index(Backend b, int i) {
    b.dampingMerit().releaseIndex = i;
  }
}
