package dev.vigil.passive;

import dev.vigil.runtime.PoolKey;
import io.vertx.core.Context;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An in-memory reviewer: tokens name users, and a user may report for the namespaces it was granted
 * (except pools named "secret"). Counts its calls and notes any made on an event loop.
 */
final class FakeReviewer implements Reviewer {
  final Map<String, String> users = new ConcurrentHashMap<>();
  final Map<String, Set<String>> namespaces = new ConcurrentHashMap<>();
  final AtomicInteger tokenReviews = new AtomicInteger();
  final AtomicInteger accessReviews = new AtomicInteger();
  final AtomicInteger onEventLoop = new AtomicInteger();
  volatile boolean failing;

  FakeReviewer user(String token, String username, String... grantedNamespaces) {
    users.put(token, username);
    namespaces.put(username, Set.of(grantedNamespaces));
    return this;
  }

  @Override
  public Optional<Identity> authenticate(String token) {
    check();
    tokenReviews.incrementAndGet();
    String user = users.get(token);
    return user == null
        ? Optional.empty()
        : Optional.of(new Identity(user, "uid-" + user, List.of("system:serviceaccounts"), null));
  }

  @Override
  public boolean mayReport(Identity caller, PoolKey pool) {
    check();
    accessReviews.incrementAndGet();
    return namespaces.getOrDefault(caller.username(), Set.of()).contains(pool.namespace())
        && !pool.name().equals("secret");
  }

  private void check() {
    if (Context.isOnEventLoopThread()) {
      onEventLoop.incrementAndGet();
    }
    if (failing) {
      throw new IllegalStateException("API server unreachable");
    }
  }
}
