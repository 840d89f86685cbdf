package dev.vigil.probe;

import io.vertx.core.Future;
import java.util.EnumMap;
import java.util.Map;

/**
 * Picks the prober for a check's protocol: HTTP, HTTPS and WebSocket, TCP, GRPC. The probers are
 * handed in (they live in the subpackages, which depend on this one and never the reverse).
 */
public final class ProtocolProber implements Prober {

  private final Map<ProbeProtocol, Prober> byProtocol;
  private final Prober http2;

  public ProtocolProber(Prober http, Prober tcp, Prober grpc) {
    this(http, tcp, grpc, http);
  }

  /**
   * @param http2 HTTP and HTTPS checks with {@code active.http.version: "2"}
   */
  public ProtocolProber(Prober http, Prober tcp, Prober grpc, Prober http2) {
    this.http2 = http2;
    byProtocol = new EnumMap<>(ProbeProtocol.class);
    byProtocol.put(ProbeProtocol.HTTP, http);
    byProtocol.put(ProbeProtocol.HTTPS, http);
    byProtocol.put(ProbeProtocol.WEBSOCKET, http);
    byProtocol.put(ProbeProtocol.TCP, tcp);
    byProtocol.put(ProbeProtocol.GRPC, grpc);
  }

  /** The gRPC prober's Health/Watch streams ({@code active.grpc.watch}). */
  public HealthWatcher watcher() {
    return byProtocol.get(ProbeProtocol.GRPC) instanceof HealthWatcher w ? w : HealthWatcher.NONE;
  }

  @Override
  public Future<ProbeResult> probe(ProbeTarget target, CheckSpec spec) {
    if (spec.http2()
        && (spec.protocol() == ProbeProtocol.HTTP || spec.protocol() == ProbeProtocol.HTTPS)) {
      return http2.probe(target, spec);
    }
    return byProtocol.get(spec.protocol()).probe(target, spec);
  }

  @Override
  public void forget(ProbeTarget target) {
    probers().forEach(p -> p.forget(target));
  }

  @Override
  public Future<Void> close() {
    return Future.all(probers().map(Prober::close).toList()).mapEmpty();
  }

  private java.util.stream.Stream<Prober> probers() {
    return java.util.stream.Stream.concat(
            byProtocol.values().stream(), java.util.stream.Stream.of(http2))
        .distinct();
  }
}
