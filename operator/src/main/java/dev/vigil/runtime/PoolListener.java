package dev.vigil.runtime;

/** Told when a pool's view changed in a way its status or slices show. */
@FunctionalInterface
public interface PoolListener {
  void changed(PoolKey pool);
}
