package dev.vigil.reconcile;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Secret;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.IndexerResourceCache;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The ConfigMaps and Secrets of probe TLS, from informers that watch only objects labelled {@value
 * ProbeTlsObjects#LABEL}{@code =true} (least privilege: the operator never lists a Secret without
 * it, and none with {@code --probe-tls-secrets=false}). A change of such an object reconciles the
 * primaries of its namespace (pools or policies), whose resolve then reads the new content: a
 * rotated Secret reaches the probes within one reconcile, without a restart. Labelled objects are
 * few and change rarely, so mapping to the namespace's primaries costs little.
 *
 * @param <P> the primary resource (BackendPool or HealthPolicy)
 */
public final class ProbeTlsSources<P extends HasMetadata> implements ProbeTlsObjects {
  private static final String SELECTOR = LABEL + "=true";

  private final boolean readSecrets;
  private InformerEventSource<ConfigMap, P> configMaps;
  private InformerEventSource<Secret, P> secrets;

  /**
   * @param readSecrets watch labelled Secrets ({@code --probe-tls-secrets}); false: none at all
   */
  public ProbeTlsSources(boolean readSecrets) {
    this.readSecrets = readSecrets;
  }

  /** Makes the informer event sources; the reconciler's {@code prepareEventSources} calls it. */
  public List<EventSource<?, P>> prepare(EventSourceContext<P> context, Class<P> primary) {
    IndexerResourceCache<P> primaries = context.getPrimaryCache();
    configMaps =
        new InformerEventSource<>(
            InformerEventSourceConfiguration.from(ConfigMap.class, primary)
                .withName("probe-tls-configmaps")
                .withLabelSelector(SELECTOR)
                .withSecondaryToPrimaryMapper(c -> inNamespace(primaries, c))
                .build(),
            context);
    List<EventSource<?, P>> sources = new ArrayList<>(List.of(configMaps));
    if (readSecrets) {
      secrets =
          new InformerEventSource<>(
              InformerEventSourceConfiguration.from(Secret.class, primary)
                  .withName("probe-tls-secrets")
                  .withLabelSelector(SELECTOR)
                  .withSecondaryToPrimaryMapper(s -> inNamespace(primaries, s))
                  .build(),
              context);
      sources.add(secrets);
    }
    return sources;
  }

  private static <P extends HasMetadata> Set<ResourceID> inNamespace(
      IndexerResourceCache<P> primaries, HasMetadata object) {
    return primaries
        .list(object.getMetadata().getNamespace())
        .map(ResourceID::fromResource)
        .collect(Collectors.toSet());
  }

  @Override
  public Map<String, String> configMap(String namespace, String name) {
    if (configMaps == null) {
      return null;
    }
    return configMaps
        .get(new ResourceID(name, namespace))
        .map(c -> c.getData() == null ? Map.<String, String>of() : c.getData())
        .orElse(null);
  }

  @Override
  public Map<String, String> secret(String namespace, String name) {
    if (secrets == null) {
      return null;
    }
    return secrets.get(new ResourceID(name, namespace)).map(ProbeTlsSources::decoded).orElse(null);
  }

  /** A Secret's data decoded (stringData too, as the mock API server does not merge it). */
  public static Map<String, String> decoded(Secret secret) {
    Map<String, String> out = new HashMap<>();
    if (secret.getData() != null) {
      secret
          .getData()
          .forEach(
              (k, v) -> {
                try {
                  out.put(k, new String(Base64.getDecoder().decode(v), StandardCharsets.UTF_8));
                } catch (IllegalArgumentException e) {
                  // not base64: left out, so the resolve names the missing key
                }
              });
    }
    if (secret.getStringData() != null) {
      out.putAll(secret.getStringData());
    }
    return out;
  }

  @Override
  public boolean secretsReadable() {
    return readSecrets;
  }
}
