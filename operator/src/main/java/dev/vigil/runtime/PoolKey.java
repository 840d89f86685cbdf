package dev.vigil.runtime;

/** A pool's namespace and name. */
public record PoolKey(String namespace, String name) {
  @Override
  public String toString() {
    return namespace + "/" + name;
  }
}
