package dev.vigil.probe.transport;

import dev.vigil.probe.TlsMaterial;
import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * The HTTP/2 and gRPC clients of checks that bring their own {@link TlsMaterial}: one client (so
 * one TLS context and one connection pool) per distinct {@link Key}, made on first use, shared by
 * every pool whose check has that key, and closed once no probe used it for {@link #IDLE_MS}. A
 * rotated Secret is a new key: the old client goes after the idle time. Clients are held strongly
 * here, since Vert.x closes an HTTP client that is garbage collected.
 *
 * @param <C> the client type
 */
public final class TlsClients<C> {

  /** A client unused this long is closed (a probe after that makes it again). */
  public static final long IDLE_MS = 10 * 60_000;

  /** How often at most a {@link #get} looks for idle clients. */
  static final long SWEEP_EVERY_MS = 60_000;

  /**
   * What a client's options depend on.
   *
   * @param trustAll {@code insecureSkipVerify}
   * @param named a server name goes out as SNI
   * @param material the CA bundle and client certificate
   */
  public record Key(boolean trustAll, boolean named, TlsMaterial material) {}

  private final Function<Key, C> factory;
  private final Function<C, Future<Void>> closer;
  private final LongSupplier clockMs;
  private final Map<Key, Entry<C>> clients = new ConcurrentHashMap<>();
  private volatile long nextSweep;

  public TlsClients(
      Function<Key, C> factory, Function<C, Future<Void>> closer, LongSupplier clockMs) {
    this.factory = factory;
    this.closer = closer;
    this.clockMs = clockMs;
    this.nextSweep = clockMs.getAsLong() + SWEEP_EVERY_MS;
  }

  /** The client for {@code key}, made now if there is none; marks it used. */
  public C get(Key key) {
    long now = clockMs.getAsLong();
    Entry<C> entry =
        clients.compute(
            key,
            (k, e) -> {
              Entry<C> kept = e == null ? new Entry<>(factory.apply(k)) : e;
              kept.lastUsed = now;
              return kept;
            });
    if (now >= nextSweep) {
      nextSweep = now + SWEEP_EVERY_MS;
      sweep(now);
    }
    return entry.client;
  }

  /** Closes the clients no probe used for {@link #IDLE_MS} before {@code now}. */
  Future<Void> sweep(long now) {
    List<Future<Void>> closing = new ArrayList<>();
    for (Key key : List.copyOf(clients.keySet())) {
      Object[] removed = new Object[1];
      clients.computeIfPresent(
          key,
          (k, e) -> {
            if (now - e.lastUsed < IDLE_MS) {
              return e;
            }
            removed[0] = e.client;
            return null;
          });
      if (removed[0] != null) {
        @SuppressWarnings("unchecked")
        C client = (C) removed[0];
        closing.add(closer.apply(client));
      }
    }
    return Future.all(closing).mapEmpty();
  }

  /** How many clients are open. */
  public int size() {
    return clients.size();
  }

  /** Closes every client. */
  public Future<Void> close() {
    List<Future<Void>> closing = new ArrayList<>();
    for (Key key : List.copyOf(clients.keySet())) {
      Entry<C> e = clients.remove(key);
      if (e != null) {
        closing.add(closer.apply(e.client));
      }
    }
    return Future.all(closing).mapEmpty();
  }

  private static final class Entry<C> {
    final C client;
    volatile long lastUsed;

    Entry(C client) {
      this.client = client;
    }
  }
}
