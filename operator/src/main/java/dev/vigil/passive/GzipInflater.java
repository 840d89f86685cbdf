package dev.vigil.passive;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.zip.GZIPInputStream;

/**
 * Inflates a gzip-compressed OTLP body (HTTP {@code Content-Encoding: gzip}) or message (gRPC
 * {@code grpc-encoding: gzip}), as Traefik's and the Collector's exporters send them, under a
 * bound: a small compressed body must not make the event loop inflate more than the intake's body
 * limit (gzip reaches about 1,000:1).
 */
final class GzipInflater {
  private GzipInflater() {}

  /**
   * {@code gz} inflated (every gzip member, as HTTP's gzip coding allows), or null as soon as it
   * would pass {@code max} bytes.
   *
   * @throws IOException when {@code gz} is no gzip data
   */
  static byte[] inflate(byte[] gz, int max) throws IOException {
    try (GZIPInputStream in = new GZIPInputStream(new ByteArrayInputStream(gz))) {
      ByteArrayOutputStream out =
          new ByteArrayOutputStream((int) Math.min(max, 4L * gz.length + 64));
      byte[] chunk = new byte[16 * 1024];
      for (int n = in.read(chunk); n >= 0; n = in.read(chunk)) {
        if (out.size() + n > max) {
          return null;
        }
        out.write(chunk, 0, n);
      }
      return out.toByteArray();
    }
  }
}
