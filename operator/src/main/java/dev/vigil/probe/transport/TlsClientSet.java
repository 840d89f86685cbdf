package dev.vigil.probe.transport;

import dev.vigil.probe.CheckSpec;
import dev.vigil.probe.TlsMaterial;
import io.vertx.core.Future;
import io.vertx.core.http.HttpClientOptions;
import java.util.List;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * The TLS clients of an HTTP/2 or gRPC prober: four made at start, verifying with the JVM's CAs or
 * trusting anything, each with or without SNI, and one per distinct {@link TlsMaterial} of checks
 * that bring their own CA bundle or client certificate ({@link TlsClients}, closed when idle). All
 * held strongly: Vert.x closes an HTTP client that is garbage collected.
 *
 * @param <C> the client type
 */
public final class TlsClientSet<C> {

  /** A client's TLS options: {@code trustAll} ({@code insecureSkipVerify}), {@code named} (SNI). */
  public interface Options {
    HttpClientOptions of(boolean trustAll, boolean named);
  }

  private final C verifying;
  private final C trustingAll;
  private final C namedVerifying;
  private final C namedTrustingAll;
  private final TlsClients<C> withMaterial;
  private final Function<C, Future<Void>> closer;

  /**
   * @param options each client's options, before {@code source} and any material apply
   * @param make makes a client of its options
   */
  public TlsClientSet(
      Options options,
      SourceAddress source,
      Function<HttpClientOptions, C> make,
      Function<C, Future<Void>> closer,
      LongSupplier clockMs) {
    this.verifying = make.apply(source.applyTo(options.of(false, false)));
    this.trustingAll = make.apply(source.applyTo(options.of(true, false)));
    this.namedVerifying = make.apply(source.applyTo(options.of(false, true)));
    this.namedTrustingAll = make.apply(source.applyTo(options.of(true, true)));
    this.withMaterial =
        new TlsClients<>(
            key ->
                make.apply(
                    source.applyTo(
                        ClientTls.applyMaterial(
                            options.of(key.trustAll(), key.named()),
                            key.material(),
                            key.trustAll()))),
            closer,
            clockMs);
    this.closer = closer;
  }

  /**
   * The client for a check's TLS: without material of its own, one of the four.
   *
   * @param named a server name goes out as SNI
   */
  public C get(CheckSpec.Tls tls, boolean named) {
    boolean trustAll = tls.insecureSkipVerify();
    if (tls.hasMaterial()) {
      return withMaterial.get(new TlsClients.Key(trustAll, named, tls.material()));
    }
    if (named) {
      return trustAll ? namedTrustingAll : namedVerifying;
    }
    return trustAll ? trustingAll : verifying;
  }

  public Future<Void> close() {
    return Future.all(
            List.of(
                closer.apply(verifying),
                closer.apply(trustingAll),
                closer.apply(namedVerifying),
                closer.apply(namedTrustingAll),
                withMaterial.close()))
        .mapEmpty();
  }
}
