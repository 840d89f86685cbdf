package dev.vigil.demo;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
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

/**
 * Posts outcomes to Vigil's intake ({@code POST /v1/outcomes}) as a JSON array with a bearer token,
 * exactly as a proxy or sidecar running under the chart's reporter role would.
 */
public final class HttpOutcomeReporter implements OutcomeReporter {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final URI uri;
  private final String token;
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  /**
   * @param base the intake's base address, e.g. {@code http://127.0.0.1:8443}
   * @param token the reporter's ServiceAccount token
   */
  public HttpOutcomeReporter(URI base, String token) {
    this.uri = base.resolve("/v1/outcomes");
    this.token = token;
  }

  @Override
  public int report(List<Outcome> batch) throws IOException, InterruptedException {
    if (batch.isEmpty()) {
      return 0;
    }
    List<Map<String, Object>> items = new ArrayList<>(batch.size());
    for (Outcome o : batch) {
      Map<String, Object> item = new LinkedHashMap<>();
      item.put("namespace", o.namespace());
      item.put("pool", o.pool());
      item.put("backend", o.backend());
      item.put("ok", o.ok());
      if (o.status() > 0) {
        item.put("status", o.status());
      }
      item.put("origin", o.origin());
      item.put("latencyMs", o.latencyMs());
      items.add(item);
    }
    HttpRequest request =
        HttpRequest.newBuilder(uri)
            .timeout(Duration.ofSeconds(5))
            .header("Authorization", "Bearer " + token)
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofByteArray(JSON.writeValueAsBytes(items)))
            .build();
    HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
    if (response.statusCode() / 100 != 2) {
      throw new IOException(
          "intake answered " + response.statusCode() + ": " + excerpt(response.body()));
    }
    JsonNode body = JSON.readTree(response.body().isEmpty() ? "{}" : response.body());
    return body.has("accepted") ? body.get("accepted").asInt() : batch.size();
  }

  private static String excerpt(String s) {
    return s.length() > 200 ? s.substring(0, 200) + "..." : s;
  }

  @Override
  public String describe() {
    return "POST " + uri + " (bearer token of the reporter ServiceAccount)";
  }
}
