package dev.vigil.targets;

import dev.vigil.runtime.PoolKey;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * Keeps the hostname targets of every pool resolved. Bounded: at most {@value #MAX_IN_FLIGHT}
 * lookups in flight across all pools (a name that finds no room is tried on the pool's next
 * reconcile, at most {@value #BUSY_RETRY_MS} ms later), and a pool's names are capped by the CRD
 * ({@code BackendPoolSpec.MAX_HOSTNAMES}, enforced here too). Lookups run on the {@link
 * NameLookup}'s own threads; {@link #resolve} never waits for one.
 */
public final class TargetResolver implements AutoCloseable {
  public static final int MAX_IN_FLIGHT = 32;
  public static final long BUSY_RETRY_MS = 1_000;

  /** What a pool's names are now, and when the pool should look again. */
  public record Resolution(Map<String, ResolvedName> names, long nextAt) {
    public Resolution {
      names = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(names));
    }

    /** The names that do not resolve, as status shows them. */
    public List<ResolvedName> failing() {
      return names.values().stream().filter(ResolvedName::failing).toList();
    }
  }

  private final NameLookup lookup;
  private final LongSupplier clock;
  private final int maxNamesPerPool;
  private final TargetNetworks refused;
  private final Map<PoolKey, Map<String, ResolvedName>> pools = new HashMap<>();
  private final Set<String> inFlight = new HashSet<>();
  private volatile Consumer<PoolKey> onChange = key -> {};

  /**
   * @param refused the networks no target may be in (static or resolved; TargetMembers applies it)
   */
  public TargetResolver(
      NameLookup lookup, LongSupplier clock, int maxNamesPerPool, TargetNetworks refused) {
    this.refused = refused;
    this.lookup = lookup;
    this.clock = clock;
    this.maxNamesPerPool = maxNamesPerPool;
  }

  public TargetNetworks refused() {
    return refused;
  }

  /** Who hears that a pool's names changed (addresses, or starting or ending to fail). */
  public void onChange(Consumer<PoolKey> listener) {
    this.onChange = listener;
  }

  /**
   * The pool's names as known now (forgetting names it no longer has), starting the lookups that
   * are due.
   */
  public Resolution resolve(PoolKey pool, Collection<String> hostnames) {
    List<String> start = new ArrayList<>();
    Map<String, ResolvedName> out = new LinkedHashMap<>();
    long now = clock.getAsLong();
    long next = Long.MAX_VALUE;
    synchronized (this) {
      Map<String, ResolvedName> names = pools.computeIfAbsent(pool, k -> new HashMap<>());
      names.keySet().retainAll(hostnames);
      for (String h : hostnames.stream().distinct().limit(maxNamesPerPool).toList()) {
        ResolvedName name = names.computeIfAbsent(h, ResolvedName::pending).at(now);
        names.put(h, name);
        out.put(h, name);
        String flight = flight(pool, h);
        if (name.due(now) && !inFlight.contains(flight)) {
          if (inFlight.size() < MAX_IN_FLIGHT) {
            inFlight.add(flight);
            start.add(h);
          } else {
            next = Math.min(next, now + BUSY_RETRY_MS);
          }
        }
        next = Math.min(next, name.due(now) ? now + ResolvedName.RETRY_MS : name.nextAt());
      }
    }
    for (String h : start) {
      lookup.lookup(h).whenComplete((answer, error) -> answered(pool, h, answer, error));
    }
    return new Resolution(out, next);
  }

  private void answered(PoolKey pool, String hostname, DnsAnswer answer, Throwable error) {
    DnsAnswer a = error != null ? DnsAnswer.failed(error.toString()) : answer;
    boolean changed;
    synchronized (this) {
      inFlight.remove(flight(pool, hostname));
      Map<String, ResolvedName> names = pools.get(pool);
      ResolvedName before = names == null ? null : names.get(hostname);
      if (before == null) {
        return;
      }
      ResolvedName after = before.answered(a, clock.getAsLong());
      names.put(hostname, after);
      changed =
          !after.addresses().equals(before.addresses())
              || after.failing() != before.failing()
              || !Objects.equals(after.failure(), before.failure());
    }
    if (changed) {
      onChange.accept(pool);
    }
  }

  /** The pool is gone, or has no hostname targets any more. */
  public synchronized void forget(PoolKey pool) {
    pools.remove(pool);
  }

  private static String flight(PoolKey pool, String hostname) {
    return pool.namespace() + "/" + pool.name() + "/" + hostname;
  }

  @Override
  public void close() {
    lookup.close();
  }
}
