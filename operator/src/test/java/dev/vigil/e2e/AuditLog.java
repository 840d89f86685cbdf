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
 * The API server's audit log ({@code e2e/control-plane.sh} records every write at Metadata level):
 * which writes reached the server after a mark, as the server saw them.
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
