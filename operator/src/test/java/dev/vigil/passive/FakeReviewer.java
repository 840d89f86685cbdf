package dev.vigil.passive;

import dev.vigil.security.Identity;
import dev.vigil.security.Permission;
import dev.vigil.security.Reviewer;
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

  /** The callers of every SubjectAccessReview, in order. */
  final List<Identity> reviewed = new java.util.concurrent.CopyOnWriteArrayList<>();

  /** Reviews begun (before any {@link #hold}). */
  final AtomicInteger entered = new AtomicInteger();

  volatile boolean failing;

  /** When set, every review waits for it (to hold reviews in flight). */
  volatile java.util.concurrent.CountDownLatch hold;

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
  public boolean allows(Identity caller, Permission permission) {
    check();
    accessReviews.incrementAndGet();
    reviewed.add(caller);
    return namespaces.getOrDefault(caller.username(), Set.of()).contains(permission.namespace())
        && !"secret".equals(permission.name());
  }

  private void check() {
    entered.incrementAndGet();
    if (Context.isOnEventLoopThread()) {
      onEventLoop.incrementAndGet();
    }
    java.util.concurrent.CountDownLatch h = hold;
    if (h != null) {
      try {
        h.await(10, java.util.concurrent.TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    if (failing) {
      throw new IllegalStateException("API server unreachable: etcdserver: request timed out");
    }
  }
}
