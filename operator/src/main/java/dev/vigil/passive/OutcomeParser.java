package dev.vigil.passive;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import dev.vigil.runtime.PoolKey;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;
import java.util.regex.Pattern;

/**
 * Reads a batch of outcomes (a JSON array, or one JSON object per line) with Jackson's streaming
 * parser, checking each item against the wire format.
 *
 * <p>Malformed JSON, the wrong top-level shape, or too many items refuse the whole batch ({@link
 * BadBatch}); a bad item is rejected alone, with its index and the reason. The verdict: {@code ok}
 * when present decides; otherwise {@code status} decides, where 500..599 and 0 (no response:
 * connect failure, reset, timeout) are failures and 100..499 successes. {@code origin} defaults to
 * {@code local} for status 0 and {@code upstream} otherwise. A field that is null counts as absent.
 */
final class OutcomeParser {
  /** The two body formats. */
  enum Format {
    JSON_ARRAY,
    NDJSON
  }

  /** The items of a batch: the valid ones and the rejected ones. */
  record Parsed(int items, List<ParsedOutcome> outcomes, List<Rejection> rejections, int pools) {}

  private static final JsonFactory JSON = JsonFactory.builder().build();
  private static final Pattern LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?");
  private static final Pattern SUBDOMAIN =
      Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");

  private final IntakeLimits limits;
  private final LongSupplier clock;

  OutcomeParser(IntakeLimits limits, LongSupplier clock) {
    this.limits = limits;
    this.clock = clock;
  }

  Parsed parse(byte[] body, int length, Format format) throws BadBatch {
    return parse(body, length, format, null);
  }

  /**
   * As {@link #parse(byte[], int, Format)} for a batch posted to one pool's URL: an item may leave
   * out {@code namespace} and {@code pool}; one that names another pool is rejected ({@code
   * invalid_field}), because the caller was authorized for this pool only.
   */
  Parsed parse(byte[] body, int length, Format format, PoolKey only) throws BadBatch {
    if (length == 0) {
      throw new BadBatch(400, "empty_body", "the body is empty: send a batch of outcomes");
    }
    Batch batch = new Batch(clock.getAsLong(), only);
    try (JsonParser p = JSON.createParser(body, 0, length)) {
      if (format == Format.JSON_ARRAY) {
        readArray(p, batch);
      } else {
        for (JsonToken t = p.nextToken(); t != null; t = p.nextToken()) {
          batch.item(p, t);
        }
      }
    } catch (JsonProcessingException e) {
      JsonLocation at = e.getLocation();
      throw new BadBatch(
          400,
          "malformed_json",
          "malformed JSON"
              + (at == null ? "" : " at line " + at.getLineNr() + ", column " + at.getColumnNr())
              + ": "
              + e.getOriginalMessage());
    } catch (IOException e) {
      throw new BadBatch(400, "malformed_json", "unreadable body: " + e.getMessage());
    }
    if (batch.pools.size() > limits.maxPoolsPerBatch()) {
      throw new BadBatch(
          400,
          "too_many_pools",
          "the batch names "
              + batch.pools.size()
              + " pools; at most "
              + limits.maxPoolsPerBatch()
              + " per batch");
    }
    return new Parsed(batch.index, batch.outcomes, batch.rejections, batch.pools.size());
  }

  /** Reads a JSON array of items: nothing may follow it. */
  private static void readArray(JsonParser p, Batch batch) throws IOException, BadBatch {
    JsonToken t = p.nextToken();
    if (t != JsonToken.START_ARRAY) {
      throw new BadBatch(
          400,
          "not_an_array",
          "expected a JSON array of outcomes (or Content-Type: application/x-ndjson), got "
              + describe(t));
    }
    while ((t = p.nextToken()) != JsonToken.END_ARRAY) {
      if (t == null) {
        throw new BadBatch(400, "malformed_json", "malformed JSON: the array is not closed");
      }
      batch.item(p, t);
    }
    if (p.nextToken() != null) {
      throw new BadBatch(400, "malformed_json", "malformed JSON: content after the array");
    }
  }

  private static String describe(JsonToken t) {
    if (t == null) {
      return "nothing";
    }
    return switch (t) {
      case START_OBJECT -> "an object";
      case START_ARRAY -> "an array";
      case VALUE_STRING -> "a string";
      case VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT -> "a number";
      case VALUE_TRUE, VALUE_FALSE -> "a boolean";
      case VALUE_NULL -> "null";
      default -> t.name();
    };
  }

  /** The state of one parse: items so far, and the pool keys seen (each checked once). */
  private final class Batch {
    final long now;
    final List<ParsedOutcome> outcomes = new ArrayList<>();
    final List<Rejection> rejections = new ArrayList<>();
    final Map<String, Object> pools = new HashMap<>(); // "ns/pool" -> PoolKey or a problem
    int index;
    String lastNamespace;
    String lastPool;
    Object lastKey;
    final PoolKey only;

    Batch(long now, PoolKey only) {
      this.now = now;
      this.only = only;
    }

    void item(JsonParser p, JsonToken start) throws IOException, BadBatch {
      int i = index++;
      if (i >= limits.maxItems()) {
        throw new BadBatch(
            413,
            "too_many_items",
            "the batch has more than " + limits.maxItems() + " outcomes; split it");
      }
      if (start != JsonToken.START_OBJECT) {
        p.skipChildren();
        reject(i, RejectReason.INVALID_ITEM, "item is " + describe(start) + ", not an object");
        return;
      }
      ItemFields f = ItemFields.read(p);
      if (f.reason == null && only != null) {
        f.namespace = f.namespace == null ? only.namespace() : f.namespace;
        f.pool = f.pool == null ? only.name() : f.pool;
      }
      check(f);
      if (f.reason != null) {
        reject(i, f.reason, f.why);
      } else {
        accept(i, f);
      }
    }

    /** Rejects an item whose fields are each valid but that lacks one, or is too old or new. */
    private void check(ItemFields f) {
      if (f.namespace == null || f.pool == null || f.backend == null) {
        f.reject(
            RejectReason.MISSING_FIELD,
            (f.namespace == null ? "namespace" : f.pool == null ? "pool" : "backend")
                + " is required");
      } else if (!f.okSet && f.status < 0) {
        f.reject(RejectReason.MISSING_FIELD, "ok or status is required");
      } else if (f.at != ItemFields.NO_TIME && f.at < now - limits.maxAgeMs()) {
        f.reject(
            RejectReason.STALE,
            "at is " + (now - f.at) + " ms ago; at most " + limits.maxAgeMs() + " ms");
      } else if (f.at != ItemFields.NO_TIME && f.at > now + limits.maxSkewMs()) {
        f.reject(
            RejectReason.IN_FUTURE,
            "at is " + (f.at - now) + " ms in the future; at most " + limits.maxSkewMs() + " ms");
      }
    }

    /** Takes an item whose fields passed: its pool and backend address decide the rest. */
    private void accept(int i, ItemFields f) {
      Object key = key(f.namespace, f.pool);
      if (key instanceof String problem) {
        reject(i, RejectReason.INVALID_FIELD, problem);
        return;
      }
      if (only != null && !only.equals(key)) {
        reject(
            i,
            RejectReason.INVALID_FIELD,
            "the item names pool " + key + " but was posted to pool " + only + "'s URL");
        return;
      }
      int colon = f.backend.lastIndexOf(':');
      int port = colon < 0 ? -1 : port(f.backend, colon + 1);
      String ip = port < 0 ? null : ip(f.backend, colon);
      if (ip == null) {
        reject(
            i,
            RejectReason.INVALID_FIELD,
            "backend must be \"ip:port\" (IPv6 as \"[ip]:port\") with a port 1..65535, got \""
                + shorten(f.backend)
                + "\"");
        return;
      }
      outcomes.add(
          new ParsedOutcome(
              i, (PoolKey) key, ip, port, f.verdict(), f.originOrDefault(), f.latency));
    }

    /** The pool's key, or a message when the names are not Kubernetes names. */
    private Object key(String namespace, String pool) {
      if (namespace.equals(lastNamespace) && pool.equals(lastPool)) {
        return lastKey;
      }
      Object key =
          pools.computeIfAbsent(
              namespace + '/' + pool,
              k -> {
                if (namespace.length() > 63 || !LABEL.matcher(namespace).matches()) {
                  return "namespace \"" + shorten(namespace) + "\" is not a Kubernetes namespace";
                }
                if (pool.length() > 253 || !SUBDOMAIN.matcher(pool).matches()) {
                  return "pool \"" + shorten(pool) + "\" is not a Kubernetes object name";
                }
                return new PoolKey(namespace, pool);
              });
      lastNamespace = namespace;
      lastPool = pool;
      lastKey = key;
      return key;
    }

    private void reject(int index, RejectReason reason, String message) {
      rejections.add(new Rejection(index, reason, message));
    }
  }

  /** The port after the last colon: 1..65535, no sign, no leading zero; -1 otherwise. */
  static int port(String s, int from) {
    int n = s.length() - from;
    if (n < 1 || n > 5 || s.charAt(from) == '0') {
      return -1;
    }
    int port = 0;
    for (int i = from; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c < '0' || c > '9') {
        return -1;
      }
      port = port * 10 + (c - '0');
    }
    return port <= 65535 ? port : -1;
  }

  /**
   * The IP before the port's colon: a dotted quad without leading zeros, or an IPv6 address in
   * brackets (returned without them, lower case); null when it is neither.
   */
  static String ip(String s, int colon) {
    if (colon > 2 && s.charAt(0) == '[' && s.charAt(colon - 1) == ']') {
      return ipv6(s.substring(1, colon - 1));
    }
    return ipv4(s, colon) ? s.substring(0, colon) : null;
  }

  /** An IPv6 address as written between brackets, lower case; null when it is not one. */
  private static String ipv6(String v6) {
    if (v6.length() > 45 || v6.indexOf(':') < 0) {
      return null;
    }
    for (int i = 0; i < v6.length(); i++) {
      char c = Character.toLowerCase(v6.charAt(i));
      if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == ':' || c == '.')) {
        return null;
      }
    }
    return v6.toLowerCase(java.util.Locale.ROOT);
  }

  /** Whether the text before {@code end} is a dotted quad of 0..255 without leading zeros. */
  private static boolean ipv4(String s, int end) {
    int parts = 0;
    int value = -1;
    int digits = 0;
    for (int i = 0; i < end; i++) {
      char c = s.charAt(i);
      if (c == '.') {
        if (digits == 0) {
          return false;
        }
        parts++;
        digits = 0;
        value = -1;
      } else if (c >= '0' && c <= '9') {
        if (digits > 0 && value == 0) {
          return false; // a leading zero
        }
        value = (digits == 0 ? 0 : value) * 10 + (c - '0');
        digits++;
        if (value > 255) {
          return false;
        }
      } else {
        return false;
      }
    }
    return parts == 3 && digits > 0;
  }

  private static String shorten(String s) {
    return s.length() <= 64 ? s : s.substring(0, 61) + "...";
  }
}
