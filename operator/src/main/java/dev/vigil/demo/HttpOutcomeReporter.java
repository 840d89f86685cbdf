package dev.vigil.demo;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigil.passive.OutcomeIntake;
import dev.vigil.security.CertificateAuthority;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Posts outcomes to Vigil's intake as a proxy or sidecar running under the chart's reporter role
 * would: over TLS, trusting only the CA bundle the chart publishes, one {@code POST
 * /v1/namespaces/{ns}/backendpools/{name}/outcomes} per pool with a JSON array, and a bearer token
 * read anew for every batch (a projected ServiceAccount token with Vigil's audience is rotated by
 * the kubelet, so a reporter re-reads its file rather than keeping the first one).
 */
public final class HttpOutcomeReporter implements OutcomeReporter {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final URI base;
  private final Supplier<String> token;
  private final HttpClient http;

  /**
   * @param base the intake's base address, e.g. {@code https://127.0.0.1:8443}
   * @param token reads the reporter's current token (for a file: {@code Files.readString(path)})
   * @param caPem the CA bundle that signed the intake's certificate
   */
  public HttpOutcomeReporter(URI base, Supplier<String> token, String caPem) {
    this.base = base;
    this.token = token;
    this.http =
        HttpClient.newBuilder()
            .connectTimeout(Duration.ofSeconds(2))
            .sslContext(CertificateAuthority.trusting(caPem))
            .build();
  }

  @Override
  public int report(List<Outcome> batch) throws IOException, InterruptedException {
    Map<URI, List<Map<String, Object>>> byPool = new LinkedHashMap<>();
    for (Outcome o : batch) {
      Map<String, Object> item = new LinkedHashMap<>();
      item.put("backend", o.backend());
      item.put("ok", o.ok());
      if (o.status() > 0) {
        item.put("status", o.status());
      }
      item.put("origin", o.origin());
      item.put("latencyMs", o.latencyMs());
      byPool.computeIfAbsent(target(o.namespace(), o.pool()), k -> new ArrayList<>()).add(item);
    }
    int accepted = 0;
    for (Map.Entry<URI, List<Map<String, Object>>> pool : byPool.entrySet()) {
      accepted += post(pool.getKey(), pool.getValue());
    }
    return accepted;
  }

  private int post(URI uri, List<Map<String, Object>> items)
      throws IOException, InterruptedException {
    HttpRequest request =
        HttpRequest.newBuilder(uri)
            .timeout(Duration.ofSeconds(5))
            .header("Authorization", "Bearer " + token.get().trim())
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofByteArray(JSON.writeValueAsBytes(items)))
            .build();
    HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
    if (response.statusCode() / 100 != 2) {
      throw new IOException(
          "intake answered " + response.statusCode() + ": " + excerpt(response.body()));
    }
    JsonNode body = JSON.readTree(response.body().isEmpty() ? "{}" : response.body());
    return body.has("accepted") ? body.get("accepted").asInt() : items.size();
  }

  private static String excerpt(String s) {
    return s.length() > 200 ? s.substring(0, 200) + "..." : s;
  }

  @Override
  public URI target(String namespace, String pool) {
    return base.resolve(OutcomeIntake.path(namespace, pool));
  }
}
