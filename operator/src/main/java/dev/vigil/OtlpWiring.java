package dev.vigil;

import dev.vigil.Lifecycle.Stage;
import dev.vigil.api.v1alpha1.BackendPoolSpec;
import dev.vigil.passive.BackendAddresses;
import dev.vigil.passive.OtlpProfile;
import dev.vigil.passive.OutcomeIntake;
import dev.vigil.reconcile.PoolAddressFeed;
import dev.vigil.security.ClientCertificates;
import dev.vigil.targets.DnsLookup;
import dev.vigil.targets.TargetResolver;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The OTLP logs receiver (docs/passive.md, "OTLP receiver"), on the outcome intake's port: the
 * index of every pool's backend addresses, fed by its own informers, and the profiles records are
 * read with ({@code traefik}, {@code envoy}, and {@code custom} when {@code --otlp-custom-profile}
 * names one); and the CA bundle whose client certificates identify the port's callers instead of a
 * token ({@code --intake-client-ca}), for exporters that cannot send a rotating one.
 */
final class OtlpWiring {
  /** How often the client CA bundle is re-read, as the serving certificate. */
  private static final long CLIENT_CA_CHECK_MS = 10_000;

  /** How often hostname targets whose answer is due are asked again (the TTL floor). */
  private static final long NAMES_DUE_CHECK_MS = 5_000;

  private OtlpWiring() {}

  /**
   * The CAs whose client certificates identify callers of the outcome port, OTLP exporters and JSON
   * reporters alike ({@code --intake-client-ca}, docs/passive.md "Client certificates"), re-read
   * every 10 s; null without the flag. A bundle that does not load stops the start, naming the
   * flag.
   */
  static ClientCertificates clientCertificates(StartOptions o) {
    String file = o.config.intake().clientCaFile();
    return file == null
        ? null
        : new ClientCertificates(o.vertx, Path.of(file), o.clock).checkEvery(CLIENT_CA_CHECK_MS);
  }

  static void receive(
      StartOptions o, OutcomeIntake intake, MeterRegistry registry, Lifecycle lifecycle) {
    BackendAddresses addresses = new BackendAddresses();
    TargetResolver names =
        new TargetResolver(
            new DnsLookup(o.config.targets().dnsServer()),
            o.clock,
            BackendPoolSpec.MAX_HOSTNAMES,
            o.config.targets().refused());
    PoolAddressFeed feed = PoolAddressFeed.start(o.client, o.config.namespaces(), addresses, names);
    long due =
        o.vertx.setPeriodic(
            NAMES_DUE_CHECK_MS,
            id ->
                o.vertx.executeBlocking(
                    () -> {
                      feed.resolveDue();
                      return null;
                    }));
    lifecycle.on(
        Stage.RECONCILE,
        "the OTLP receiver's pool address informers and hostname lookups",
        () -> {
          o.vertx.cancelTimer(due);
          feed.close();
        });
    Gauge.builder("vigil_otlp_backend_addresses", addresses, BackendAddresses::size)
        .description("Backend addresses (ip:port) of all pools the OTLP receiver maps records to")
        .register(registry);
    List<OtlpProfile> profiles = new ArrayList<>(List.of(OtlpProfile.TRAEFIK, OtlpProfile.ENVOY));
    if (o.config.intake().otlpCustom() != null) {
      profiles.add(o.config.intake().otlpCustom());
    }
    intake.receiveOtlp(addresses, profiles);
  }
}
