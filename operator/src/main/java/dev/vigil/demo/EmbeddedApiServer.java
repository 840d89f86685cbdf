package dev.vigil.demo;

import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMixedDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.ServerRequest;
import io.fabric8.mockwebserver.ServerResponse;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An API server in the process: the Fabric8 mock server in CRUD mode on loopback, with Vigil's CRDs
 * created in it. The demo and the mock-API tests run the real operator against it.
 */
public final class EmbeddedApiServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(EmbeddedApiServer.class);

  /** The generated CRDs, packaged in the jar by the build. */
  public static final List<String> CRD_RESOURCES =
      List.of(
          "META-INF/fabric8/healthpolicies.vigil.dev-v1.yml",
          "META-INF/fabric8/backendpools.vigil.dev-v1.yml");

  private final KubernetesMockServer server;
  private final KubernetesClient client;

  private EmbeddedApiServer(KubernetesMockServer server, KubernetesClient client) {
    this.server = server;
    this.client = client;
  }

  /** Starts the server on a free loopback port and creates Vigil's CRDs in it. */
  public static EmbeddedApiServer start() {
    return start(KubernetesMixedDispatcher::new);
  }

  /**
   * As {@link #start()}, with a dispatcher of the caller's (a test's, e.g. one that records every
   * request) over the expectations.
   */
  public static EmbeddedApiServer start(
      Function<Map<ServerRequest, Queue<ServerResponse>>, KubernetesMixedDispatcher> dispatcher) {
    // CRUD mode that also serves expectations (server().expect()...), e.g. for TokenReviews.
    Map<ServerRequest, Queue<ServerResponse>> expectations = new HashMap<>();
    KubernetesMockServer server =
        new KubernetesMockServer(
            new Context(),
            new MockWebServer(),
            expectations,
            dispatcher.apply(expectations),
            false);
    try {
      server.init(InetAddress.getLoopbackAddress(), 0);
    } catch (RuntimeException e) {
      throw new IllegalStateException("could not start the embedded API server", e);
    }
    KubernetesClient client = server.createClient();
    for (CustomResourceDefinition crd : crds()) {
      client.resource(crd).create();
    }
    return new EmbeddedApiServer(server, client);
  }

  /** Vigil's CRDs as the build generated them. */
  public static List<CustomResourceDefinition> crds() {
    ClassLoader loader = EmbeddedApiServer.class.getClassLoader();
    return CRD_RESOURCES.stream()
        .map(
            name -> {
              try (InputStream in = loader.getResourceAsStream(name)) {
                if (in == null) {
                  throw new IllegalStateException(name + " is missing: build with mvn first");
                }
                return Serialization.unmarshal(in, CustomResourceDefinition.class);
              } catch (IOException e) {
                throw new UncheckedIOException(e);
              }
            })
        .toList();
  }

  public KubernetesClient client() {
    return client;
  }

  public KubernetesMockServer server() {
    return server;
  }

  /** A new client of this server (each operator instance gets its own). */
  public KubernetesClient newClient() {
    return server.createClient();
  }

  @Override
  public void close() {
    client.close();
    try {
      server.destroy();
    } catch (IllegalStateException e) {
      // The mock server's shutdown waits for watch websockets whose peers are already gone and
      // can exceed its own 30 s budget; the port is released either way.
      LOG.debug("embedded API server shutdown: {}", e.getMessage());
    }
  }
}
