package dev.vigil.publish;

import io.fabric8.kubernetes.client.KubernetesClientException;

/**
 * What the API server said about a failed request, in words for a log line or a condition. Fabric8
 * reports a request that got no answer (a timeout after its own retries, a reset connection) with
 * code -1 and the generic "An error has occurred."; the cause says what happened.
 */
public final class ApiErrors {
  private ApiErrors() {}

  /** "HTTP 500 InternalError: etcdserver: request timed out", or "no answer: ..." (code -1). */
  public static String describe(KubernetesClientException e) {
    if (e.getCode() <= 0) {
      return "no answer from the API server: " + message(e);
    }
    StringBuilder sb = new StringBuilder("HTTP ").append(e.getCode());
    if (e.getStatus() != null && e.getStatus().getReason() != null) {
      sb.append(' ').append(e.getStatus().getReason());
    }
    return sb.append(": ").append(message(e)).toString();
  }

  /** The API server's message, else the innermost cause. */
  static String message(KubernetesClientException e) {
    if (e.getStatus() != null && e.getStatus().getMessage() != null) {
      return e.getStatus().getMessage();
    }
    Throwable root = e;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    if (root == e) {
      return String.valueOf(e.getMessage());
    }
    String text = root.getMessage();
    return root.getClass().getSimpleName() + (text == null ? "" : " " + text);
  }
}
