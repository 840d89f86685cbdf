package dev.vigil.peer;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.function.Supplier;

/**
 * This replica's own token, as the Fabric8 client holds it for its API calls now: a token provider
 * when one is configured, else the configured token, else the one it read from the ServiceAccount
 * token file (which its token refresh re-reads as the kubelet rotates it). "" when it has none.
 */
public final class ServiceAccountToken implements Supplier<String> {
  private final KubernetesClient client;

  public ServiceAccountToken(KubernetesClient client) {
    this.client = client;
  }

  @Override
  public String get() {
    Config c = client.getConfiguration();
    if (c.getOauthTokenProvider() != null) {
      return c.getOauthTokenProvider().getToken();
    }
    String token = c.getOauthToken();
    if (token == null || token.isEmpty()) {
      token = c.getAutoOAuthToken();
    }
    return token == null ? "" : token;
  }
}
