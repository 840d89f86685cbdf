package dev.vigil.passive;

import dev.vigil.runtime.PoolKey;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * A reporter's {@code Idempotency-Key} (the IETF httpapi draft "The Idempotency-Key HTTP Header
 * Field"; docs/passive.md, "Sending a batch again"), scoped to the caller and the pool: {@code
 * slot} is what the pool's owner remembers the batch's answer under (a digest of the caller's user
 * name, the pool and the key, so two callers or two pools never share one), {@code fingerprint} the
 * digest of the request body, so a key sent again with another body is refused instead of answered
 * with the first body's answer.
 */
public record IdempotencyKey(String slot, String fingerprint) {
  /** The request header, as the draft names it. */
  public static final String HEADER = "Idempotency-Key";

  /** The longest key taken (Stripe's limit; a UUID takes 36). */
  static final int MAX_LENGTH = 255;

  /** A header that is not a key. */
  static final class Invalid extends IllegalArgumentException {
    Invalid(String message) {
      super(message);
    }
  }

  /**
   * The key a header value carries, or null when there is none: the draft's form (a Structured
   * Field String, {@code "8e03978e-..."}) or a bare token without quotes (as Stripe's clients send
   * it); 1 to {@value #MAX_LENGTH} printable ASCII characters.
   *
   * @throws Invalid naming the header and what is wrong
   */
  static String parse(String header) {
    if (header == null) {
      return null;
    }
    String v = header.strip();
    if (v.length() >= 2 && v.startsWith("\"") && v.endsWith("\"")) {
      v = unquote(v.substring(1, v.length() - 1));
    } else if (v.indexOf('"') >= 0 || v.indexOf(' ') >= 0) {
      throw new Invalid(
          HEADER + " must be a quoted string (\"...\") or one token without spaces or quotes");
    }
    if (v.isEmpty() || v.length() > MAX_LENGTH) {
      throw new Invalid(HEADER + " must be 1 to " + MAX_LENGTH + " characters");
    }
    for (int i = 0; i < v.length(); i++) {
      char c = v.charAt(i);
      if (c < 0x20 || c > 0x7e) {
        throw new Invalid(HEADER + " must be printable ASCII (a UUID is a good key)");
      }
    }
    return v;
  }

  /** An RFC 8941 String's content: {@code \"} and {@code \\} are its only escapes. */
  private static String unquote(String s) {
    StringBuilder out = new StringBuilder(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '\\') {
        if (i + 1 >= s.length() || (s.charAt(i + 1) != '"' && s.charAt(i + 1) != '\\')) {
          throw new Invalid(HEADER + ": a quoted key escapes only \\\" and \\\\");
        }
        c = s.charAt(++i);
      } else if (c == '"') {
        throw new Invalid(HEADER + ": a quote inside a quoted key must be escaped");
      }
      out.append(c);
    }
    return out.toString();
  }

  /** {@code key} of {@code user}'s request for {@code pool} with {@code body}. */
  static IdempotencyKey of(String key, String user, PoolKey pool, byte[] body) {
    String scope = user + "\n" + pool.namespace() + "\n" + pool.name() + "\n" + key;
    return new IdempotencyKey(
        digest(scope.getBytes(StandardCharsets.UTF_8)), digest(body == null ? new byte[0] : body));
  }

  private static String digest(byte[] bytes) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every JRE", e);
    }
  }
}
