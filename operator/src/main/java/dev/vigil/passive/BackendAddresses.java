package dev.vigil.passive;

import dev.vigil.runtime.Member;
import dev.vigil.runtime.PoolKey;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Which pools a backend address ({@code ip:port}) belongs to, over the members of every pool in the
 * cluster, not only the pools this replica runs (an OTLP record names an address, never a pool; the
 * routing to the pool's owner comes after). Each member is known at its IP with every Pod port the
 * pool's ports target and its probe port; an address may belong to several pools (overlapping
 * selectors), and a record then counts for each of them.
 *
 * <p>Written by the reconcile side ({@link #replace}, {@link #remove}) whenever a pool's members
 * change; read by the intake's event loops ({@link #pools}). Thread-safe, O(members of the pool)
 * per write and O(1) per read.
 */
public final class BackendAddresses {
  private final Map<String, List<PoolKey>> byAddress = new ConcurrentHashMap<>();
  private final Map<PoolKey, Set<String>> byPool = new ConcurrentHashMap<>();

  /** Sets the pool's members: its old addresses go, the new ones come. */
  public synchronized void replace(PoolKey pool, Collection<Member> members) {
    Set<String> now = new HashSet<>();
    for (Member m : members) {
      if (m.probePort() > 0) {
        now.add(key(m.ip(), m.probePort()));
      }
      for (int port : m.ports()) {
        if (port > 0) {
          now.add(key(m.ip(), port));
        }
      }
    }
    Set<String> before = byPool.getOrDefault(pool, Set.of());
    for (String address : before) {
      if (!now.contains(address)) {
        unlink(address, pool);
      }
    }
    for (String address : now) {
      if (!before.contains(address)) {
        link(address, pool);
      }
    }
    if (now.isEmpty()) {
      byPool.remove(pool);
    } else {
      byPool.put(pool, Set.copyOf(now));
    }
  }

  /** The pool is gone (deleted, or no longer selects anything). */
  public synchronized void remove(PoolKey pool) {
    replace(pool, List.of());
  }

  /** The pools whose members include {@code ip:port}; empty when none. */
  public List<PoolKey> pools(String ip, int port) {
    return byAddress.getOrDefault(key(ip, port), List.of());
  }

  /** Addresses known (for tests and the gauge). */
  public int size() {
    return byAddress.size();
  }

  private void link(String address, PoolKey pool) {
    byAddress.compute(
        address,
        (k, pools) -> {
          List<PoolKey> next = pools == null ? new ArrayList<>(1) : new ArrayList<>(pools);
          next.add(pool);
          return List.copyOf(next);
        });
  }

  private void unlink(String address, PoolKey pool) {
    byAddress.computeIfPresent(
        address,
        (k, pools) -> {
          List<PoolKey> next = new ArrayList<>(pools);
          next.remove(pool);
          return next.isEmpty() ? null : List.copyOf(next);
        });
  }

  /** IPv6 addresses are kept in their canonical text (as Pod IPs are written), without brackets. */
  static String key(String ip, int port) {
    return ip + '|' + port;
  }
}
