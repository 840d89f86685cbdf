package dev.vigil.probe.http;

import dev.vigil.probe.CheckSpec;
import dev.vigil.probe.ProbeTarget;
import dev.vigil.probe.transport.ProbeConnection;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The idle connections {@link HttpProber} keeps for reuse ({@code reuseConnection}): at most one
 * per backend, taken by the next probe of that backend when its TLS settings are the same.
 */
final class KeptConnections {
  private final Map<ProbeTarget, Idle> idle = new ConcurrentHashMap<>();

  /**
   * The connection kept for {@code target}, if it suits {@code spec}; else null (one is closed).
   */
  ProbeConnection take(ProbeTarget target, CheckSpec spec) {
    Idle kept = idle.remove(target);
    if (kept == null) {
      return null;
    }
    if (kept.tls == spec.usesTls() && kept.settings.equals(spec.tls())) {
      return kept.connection;
    }
    kept.connection.close();
    return null;
  }

  /** Keeps {@code connection} for the next probe of {@code target}, closing the one kept before. */
  void keep(ProbeTarget target, ProbeConnection connection, CheckSpec spec) {
    Idle entry = new Idle(target, connection, spec.usesTls(), spec.tls());
    connection.receive(entry);
    Idle previous = idle.put(target, entry);
    if (previous != null) {
      previous.connection.close();
    }
  }

  /** Closes and forgets the connections kept to {@code ip} (any port). */
  void forget(String ip) {
    idle.entrySet()
        .removeIf(
            e -> {
              if (e.getKey().ip().equals(ip)) {
                e.getValue().connection.close();
                return true;
              }
              return false;
            });
  }

  void closeAll() {
    idle.values().forEach(i -> i.connection.close());
    idle.clear();
  }

  int size() {
    return idle.size();
  }

  /**
   * A connection kept for reuse; while idle, any byte or error from it drops it (a response nobody
   * asked for), and its close forgets it.
   */
  private final class Idle implements ProbeConnection.Receiver {
    final ProbeTarget target;
    final ProbeConnection connection;
    final boolean tls;
    final CheckSpec.Tls settings;

    Idle(ProbeTarget target, ProbeConnection connection, boolean tls, CheckSpec.Tls settings) {
      this.target = target;
      this.connection = connection;
      this.tls = tls;
      this.settings = settings;
    }

    @Override
    public void onData(byte[] bytes, int offset, int length) {
      drop();
    }

    @Override
    public void onError(Throwable failure) {
      drop();
    }

    @Override
    public void onClose() {
      idle.remove(target, this);
    }

    void drop() {
      idle.remove(target, this);
      connection.close();
    }
  }
}
