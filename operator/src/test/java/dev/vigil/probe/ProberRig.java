package dev.vigil.probe;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import java.util.function.Function;

/**
 * What a prober test stands on: one Vert.x, real servers on 127.0.0.1 ({@link LoopbackServers}), a
 * prober made on that Vert.x, and one context to probe from (the scheduler, too, probes from a
 * Vert.x context). {@link #close()} closes the prober, the servers, then Vert.x.
 */
public final class ProberRig<P extends Prober> implements AutoCloseable {
  private final Vertx vertx;
  private final LoopbackServers servers;
  private final P prober;
  private final Context context;

  private ProberRig(Vertx vertx, Function<Vertx, P> prober) {
    this.vertx = vertx;
    this.servers = new LoopbackServers(vertx);
    this.prober = prober.apply(vertx);
    this.context = vertx.getOrCreateContext();
  }

  public static <P extends Prober> ProberRig<P> start(Function<Vertx, P> prober) {
    return new ProberRig<>(Vertx.vertx(), prober);
  }

  public static <P extends Prober> ProberRig<P> start(
      VertxOptions options, Function<Vertx, P> prober) {
    return new ProberRig<>(Vertx.vertx(options), prober);
  }

  public Vertx vertx() {
    return vertx;
  }

  public LoopbackServers servers() {
    return servers;
  }

  public P prober() {
    return prober;
  }

  public Context context() {
    return context;
  }

  /** {@code by} probes {@code target} from the rig's context; its result, not awaited. */
  public Future<ProbeResult> probeLater(Prober by, ProbeTarget target, CheckSpec spec) {
    Promise<ProbeResult> promise = Promise.promise();
    context.runOnContext(v -> by.probe(target, spec).onComplete(promise));
    return promise.future();
  }

  /** The rig's prober probes {@code target} from the rig's context; its result. */
  public ProbeResult probe(ProbeTarget target, CheckSpec spec) {
    return LoopbackServers.await(probeLater(prober, target, spec));
  }

  /** The rig's prober probes 127.0.0.1:{@code port} from the rig's context; its result. */
  public ProbeResult probe(int port, CheckSpec spec) {
    return probe(new ProbeTarget("127.0.0.1", port), spec);
  }

  @Override
  public void close() {
    LoopbackServers.await(prober.close());
    servers.close();
    LoopbackServers.await(vertx.close());
  }
}
