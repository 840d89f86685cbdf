package dev.vigil.probe.http;

import dev.vigil.probe.CheckSpec;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/** The client side of an RFC 6455 opening handshake, as far as a probe needs it. */
final class WebSocketHandshake {
  private static final String GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
  static final List<CheckSpec.HeaderMatch> HEADERS =
      List.of(
          new CheckSpec.HeaderMatch("Sec-WebSocket-Accept", null),
          new CheckSpec.HeaderMatch("Upgrade", null));
  // FIN + close opcode, masked, empty payload (a client's frames are always masked), mask 0
  static final byte[] CLOSE_FRAME = {(byte) 0x88, (byte) 0x80, 0, 0, 0, 0};

  private WebSocketHandshake() {}

  /** A fresh {@code Sec-WebSocket-Key}: 16 random bytes, base64. */
  static String newKey() {
    byte[] nonce = new byte[16];
    ThreadLocalRandom.current().nextBytes(nonce);
    return Base64.getEncoder().encodeToString(nonce);
  }

  /** The {@code Sec-WebSocket-Accept} a server must answer to {@code key} (RFC 6455 4.2.2). */
  static String expectedAccept(String key) {
    try {
      MessageDigest sha1 = MessageDigest.getInstance("SHA-1");
      byte[] digest = sha1.digest((key + GUID).getBytes(StandardCharsets.US_ASCII));
      return Base64.getEncoder().encodeToString(digest);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-1 is required of every JVM", e);
    }
  }
}
