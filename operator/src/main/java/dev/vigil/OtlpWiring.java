package dev.vigil;

import dev.vigil.Lifecycle.Stage;
import dev.vigil.passive.BackendAddresses;
import dev.vigil.passive.OtlpProfile;
import dev.vigil.passive.OutcomeIntake;
import dev.vigil.reconcile.PoolAddressFeed;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.List;

/**
 * The OTLP logs receiver (docs/passive.md, "OTLP receiver"), on the outcome intake's port: the
 * index of every pool's backend addresses, fed by its own informers, and the profiles records are
 * read with ({@code traefik}, {@code envoy}, and {@code custom} when {@code --otlp-custom-profile}
 * names one).
 */
final class OtlpWiring {
  private OtlpWiring() {}

  static void receive(
      StartOptions o, OutcomeIntake intake, MeterRegistry registry, Lifecycle lifecycle) {
    BackendAddresses addresses = new BackendAddresses();
    PoolAddressFeed feed = PoolAddressFeed.start(o.client, o.config.namespaces(), addresses);
    lifecycle.on(Stage.RECONCILE, "the OTLP receiver's pool address informers", feed::close);
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
