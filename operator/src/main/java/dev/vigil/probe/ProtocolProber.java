package dev.vigil.probe;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.EnumMap;
import java.util.Map;

/** Picks the prober for a check's protocol: HTTP, HTTPS and WebSocket, TCP, GRPC. */
public final class ProtocolProber implements Prober {

  private final Map<Protocol, Prober> byProtocol;

  public ProtocolProber(Prober http, Prober tcp, Prober grpc) {
    byProtocol = new EnumMap<>(Protocol.class);
    byProtocol.put(Protocol.HTTP, http);
    byProtocol.put(Protocol.HTTPS, http);
    byProtocol.put(Protocol.WEBSOCKET, http);
    byProtocol.put(Protocol.TCP, tcp);
    byProtocol.put(Protocol.GRPC, grpc);
  }

  /** The Vert.x probers for every protocol. */
  public static ProtocolProber create(Vertx vertx) {
    return new ProtocolProber(new HttpProber(vertx), new TcpProber(vertx), new GrpcProber(vertx));
  }

  /** The prober {@code protocol} uses. */
  public Prober forProtocol(Protocol protocol) {
    return byProtocol.get(protocol);
  }

  @Override
  public Future<ProbeResult> probe(ProbeTarget target, CheckSpec spec) {
    return byProtocol.get(spec.protocol()).probe(target, spec);
  }

  @Override
  public void forget(ProbeTarget target) {
    byProtocol.values().stream().distinct().forEach(p -> p.forget(target));
  }

  @Override
  public Future<Void> close() {
    return Future.all(byProtocol.values().stream().distinct().map(Prober::close).toList())
        .mapEmpty();
  }
}
