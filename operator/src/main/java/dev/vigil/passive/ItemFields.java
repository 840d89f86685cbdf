package dev.vigil.passive;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.vigil.health.Origin;
import java.io.IOException;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;

/**
 * The fields of one outcome item as read from the wire, and the first reason it is rejected for
 * (the rest of the item is skipped once it has one). A field that is null counts as absent.
 */
final class ItemFields {
  static final long MAX_LATENCY_MS = 3_600_000;
  static final long NO_TIME = Long.MIN_VALUE;

  private static final int NAMESPACE = 1;
  private static final int POOL = 2;
  private static final int BACKEND = 4;
  private static final int OK = 8;
  private static final int STATUS = 16;
  private static final int ORIGIN = 32;
  private static final int LATENCY = 64;
  private static final int AT = 128;

  String namespace;
  String pool;
  String backend;
  boolean okSet;
  boolean ok;
  int status = -1;
  Origin origin;
  long latency = -1;
  long at = NO_TIME;
  private int seen;
  RejectReason reason;
  String why;

  /** Reads the fields of the object item whose START_OBJECT {@code p} just read. */
  static ItemFields read(JsonParser p) throws IOException, BadBatch {
    ItemFields f = new ItemFields();
    JsonToken t;
    while ((t = p.nextToken()) == JsonToken.FIELD_NAME) {
      String name = p.currentName();
      JsonToken v = p.nextToken();
      if (f.reason == null) {
        f.field(name, v, p);
      } else {
        p.skipChildren();
      }
    }
    if (t != JsonToken.END_OBJECT) {
      throw new BadBatch(400, "malformed_json", "malformed JSON: an item is not closed");
    }
    return f;
  }

  /** Rejects the item unless another reason did first. */
  void reject(RejectReason reason, String why) {
    if (this.reason == null) {
      this.reason = reason;
      this.why = why;
    }
  }

  /** The verdict: {@code ok} when present, else 500..599 and 0 (no response) are failures. */
  boolean verdict() {
    return okSet ? ok : status > 0 && status < 500;
  }

  /** The origin: as reported, else {@code local} for status 0 and {@code upstream} otherwise. */
  Origin originOrDefault() {
    return origin != null ? origin : status == 0 ? Origin.LOCAL : Origin.UPSTREAM;
  }

  private void field(String name, JsonToken v, JsonParser p) throws IOException {
    int bit = bit(name);
    if (bit == 0) {
      p.skipChildren();
      reject(
          RejectReason.UNKNOWN_FIELD,
          "unknown field \""
              + name
              + "\"; known: namespace, pool, backend, ok, status, origin, latencyMs, at");
      return;
    }
    if ((seen & bit) != 0) {
      p.skipChildren();
      reject(RejectReason.DUPLICATE_FIELD, "field \"" + name + "\" appears twice");
      return;
    }
    seen |= bit;
    if (v == JsonToken.VALUE_NULL) {
      return;
    }
    String bad = value(bit, v, p);
    if (bad != null) {
      p.skipChildren();
      reject(RejectReason.INVALID_FIELD, bad);
    }
  }

  /** Sets one field from its value; the message when the value is not valid, else null. */
  private String value(int bit, JsonToken v, JsonParser p) throws IOException {
    return switch (bit) {
      case NAMESPACE -> (namespace = text(v, p)) == null ? "namespace must be a string" : null;
      case POOL -> (pool = text(v, p)) == null ? "pool must be a string" : null;
      case BACKEND ->
          (backend = text(v, p)) == null ? "backend must be a string \"ip:port\"" : null;
      case OK -> ok(v);
      case STATUS -> status(v, p);
      case ORIGIN -> origin(v, p);
      case LATENCY -> latency(v, p);
      case AT ->
          (at = at(p, v)) == NO_TIME ? "at must be epoch milliseconds or an RFC 3339 time" : null;
      default -> throw new IllegalStateException("field bit " + bit);
    };
  }

  private static String text(JsonToken v, JsonParser p) throws IOException {
    return v == JsonToken.VALUE_STRING ? p.getText() : null;
  }

  private String ok(JsonToken v) {
    if (v != JsonToken.VALUE_TRUE && v != JsonToken.VALUE_FALSE) {
      return "ok must be true or false";
    }
    okSet = true;
    ok = v == JsonToken.VALUE_TRUE;
    return null;
  }

  private String status(JsonToken v, JsonParser p) throws IOException {
    if (v == JsonToken.VALUE_NUMBER_INT
        && p.getNumberType() == JsonParser.NumberType.INT
        && (p.getIntValue() == 0 || (p.getIntValue() >= 100 && p.getIntValue() <= 599))) {
      status = p.getIntValue();
      return null;
    }
    return "status must be an HTTP status 100..599, or 0 for no response";
  }

  private String origin(JsonToken v, JsonParser p) throws IOException {
    String o = text(v, p);
    if ("upstream".equals(o)) {
      origin = Origin.UPSTREAM;
    } else if ("local".equals(o)) {
      origin = Origin.LOCAL;
    } else {
      return "origin must be \"upstream\" or \"local\"";
    }
    return null;
  }

  private String latency(JsonToken v, JsonParser p) throws IOException {
    double ms = v.isNumeric() ? p.getDoubleValue() : -1;
    if (ms >= 0 && ms <= MAX_LATENCY_MS) {
      latency = Math.round(ms);
      return null;
    }
    return "latencyMs must be a number of milliseconds, 0.." + MAX_LATENCY_MS;
  }

  private static int bit(String name) {
    return switch (name) {
      case "namespace" -> NAMESPACE;
      case "pool" -> POOL;
      case "backend" -> BACKEND;
      case "ok" -> OK;
      case "status" -> STATUS;
      case "origin" -> ORIGIN;
      case "latencyMs" -> LATENCY;
      case "at" -> AT;
      default -> 0;
    };
  }

  private static long at(JsonParser p, JsonToken v) throws IOException {
    if (v == JsonToken.VALUE_NUMBER_INT && p.getNumberType() != JsonParser.NumberType.BIG_INTEGER) {
      long ms = p.getLongValue();
      return ms >= 0 ? ms : NO_TIME;
    }
    if (v == JsonToken.VALUE_STRING) {
      try {
        return OffsetDateTime.parse(p.getText()).toInstant().toEpochMilli();
      } catch (DateTimeParseException | ArithmeticException e) {
        return NO_TIME;
      }
    }
    return NO_TIME;
  }
}
