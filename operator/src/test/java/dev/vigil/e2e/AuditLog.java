package dev.vigil.e2e;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The API server's audit log ({@code e2e/control-plane.sh} records every write at Metadata level,
 * and every call of the ServiceAccounts in {@code vigil-system}): which calls reached the server
 * after a mark, as the server saw them.
 */
public final class AuditLog {
  private static final Set<String> WRITES = Set.of("create", "update", "patch", "delete");
  private static final ObjectMapper JSON = new ObjectMapper();
  private final Path file;

  public AuditLog(Path file) {
    this.file = file;
  }

  /** The current end of the log. */
  public long mark() {
    try {
      return Files.size(file);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Completed writes of {@code resource} (subresource: "endpointslices", "backendpools/status").
   */
  public List<String> writesSince(long mark, String namespace, String resource) {
    List<String> out = new ArrayList<>();
    for (JsonNode e : entriesSince(mark)) {
      JsonNode ref = e.path("objectRef");
      String res = ref.path("resource").asText();
      if (ref.hasNonNull("subresource")) {
        res += "/" + ref.path("subresource").asText();
      }
      if (e.path("stage").asText().equals("ResponseComplete")
          && WRITES.contains(e.path("verb").asText())
          && namespace.equals(ref.path("namespace").asText())
          && resource.equals(res)) {
        out.add(
            e.path("verb").asText()
                + " "
                + res
                + " "
                + ref.path("name").asText()
                + " by "
                + e.path("user").path("username").asText()
                + " -> "
                + e.path("responseStatus").path("code").asText());
      }
    }
    return out;
  }

  /**
   * One call as the API server audited it: the verb, the API group ("" for core), the resource with
   * its subresource ("backendpools/status"), or for a non-resource request its path in {@code uri}
   * and an empty resource.
   */
  public record Call(
      String verb,
      String apiGroup,
      String resource,
      String namespace,
      String name,
      int code,
      String uri,
      String stage) {
    @Override
    public String toString() {
      return verb
          + " "
          + (resource.isEmpty() ? uri : (apiGroup.isEmpty() ? "core" : apiGroup) + "/" + resource)
          + (namespace.isEmpty() ? "" : " in " + namespace)
          + (name.isEmpty() ? "" : " " + name)
          + " -> "
          + code;
    }
  }

  /** Every completed write in {@code namespace} after the mark, by anyone (the load runs). */
  public List<Call> writesSince(long mark, String namespace) {
    List<Call> out = new ArrayList<>();
    for (JsonNode e : entriesSince(mark)) {
      JsonNode ref = e.path("objectRef");
      if (e.path("stage").asText().equals("ResponseComplete")
          && WRITES.contains(e.path("verb").asText())
          && namespace.equals(ref.path("namespace").asText())) {
        out.add(call(e));
      }
    }
    return out;
  }

  /**
   * When each completed write of {@code resource} in {@code namespace} after the mark reached the
   * API server and when it was answered ({@code requestReceivedTimestamp}, {@code stageTimestamp};
   * ms since the epoch, the server's clock), in log order.
   */
  public List<long[]> writeTimesSince(long mark, String namespace, String resource) {
    return namedWritesSince(mark, namespace, resource).stream()
        .map(w -> new long[] {w.receivedMs(), w.answeredMs()})
        .toList();
  }

  /** One completed write: the object's name, when it was received and answered (ms, epoch). */
  public record Write(String name, long receivedMs, long answeredMs) {}

  /** The completed writes of {@code resource} in {@code namespace} after the mark, in log order. */
  public List<Write> namedWritesSince(long mark, String namespace, String resource) {
    List<Write> out = new ArrayList<>();
    for (JsonNode e : entriesSince(mark)) {
      JsonNode ref = e.path("objectRef");
      if (e.path("stage").asText().equals("ResponseComplete")
          && WRITES.contains(e.path("verb").asText())
          && namespace.equals(ref.path("namespace").asText())
          && resource.equals(ref.path("resource").asText())) {
        out.add(
            new Write(
                ref.path("name").asText(),
                java.time.Instant.parse(e.path("requestReceivedTimestamp").asText()).toEpochMilli(),
                java.time.Instant.parse(e.path("stageTimestamp").asText()).toEpochMilli()));
      }
    }
    return out;
  }

  /** Every call {@code username} made after the mark (all stages the log holds). */
  public List<Call> callsSince(long mark, String username) {
    List<Call> out = new ArrayList<>();
    for (JsonNode e : entriesSince(mark)) {
      if (!username.equals(e.path("user").path("username").asText())) {
        continue;
      }
      out.add(call(e));
    }
    return out;
  }

  private static Call call(JsonNode e) {
    JsonNode ref = e.path("objectRef");
    String res = ref.path("resource").asText("");
    if (ref.hasNonNull("subresource")) {
      res += "/" + ref.path("subresource").asText();
    }
    return new Call(
        e.path("verb").asText(),
        ref.path("apiGroup").asText(""),
        res,
        ref.path("namespace").asText(""),
        ref.path("name").asText(""),
        e.path("responseStatus").path("code").asInt(0),
        e.path("requestURI").asText(""),
        e.path("stage").asText());
  }

  private List<JsonNode> entriesSince(long mark) {
    List<JsonNode> out = new ArrayList<>();
    try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "r")) {
      f.seek(mark);
      byte[] rest = new byte[(int) (f.length() - mark)];
      f.readFully(rest);
      for (String line : new String(rest, StandardCharsets.UTF_8).split("\n")) {
        if (!line.isBlank()) {
          try {
            out.add(JSON.readTree(line));
          } catch (com.fasterxml.jackson.core.JsonProcessingException partialLastLine) {
            // the server is still writing it
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out;
  }
}
