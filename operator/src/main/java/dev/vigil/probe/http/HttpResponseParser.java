package dev.vigil.probe.http;

import dev.vigil.probe.CheckSpec;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * An incremental, bounded HTTP/1.x response parser: the status line (checked byte by byte with the
 * same rule as {@link StatusLineClassifier}), headers up to {@link #MAX_HEAD} bytes, and the body
 * framing (Content-Length, chunked, until close) so a connection can be reused. Keeps at most
 * {@link #BODY_LIMIT} bytes of body, and only when asked to, and the values of the headers a {@code
 * headerMatch} names (within the same 32 KiB of head), and only those. Pure: no I/O.
 */
final class HttpResponseParser {

  static final int MAX_HEAD = 32 * 1024;
  static final int BODY_LIMIT = 64 * 1024;
  private static final int MAX_CHUNK_LINE = 1024;
  private static final String STATUS_SHAPE = "HTTP/d.d ddd";
  private static final byte[] NO_BODY = new byte[0];

  private enum State {
    STATUS_LINE,
    HEADERS,
    BODY_LENGTH,
    CHUNK_SIZE,
    CHUNK_DATA,
    CHUNK_DATA_END,
    TRAILERS,
    BODY_UNTIL_CLOSE,
    DONE,
    MALFORMED
  }

  private final boolean headRequest;
  private final boolean collectBody;
  private final List<CheckSpec.HeaderMatch> wanted;
  private List<String[]> kept; // {lower-case name, value} of the wanted headers, in order
  private State state = State.STATUS_LINE;
  private byte[] line = new byte[128];
  private int lineLength;
  private int headBytes;
  private String statusLine;
  private int statusCode = -1;
  private boolean http10;
  private long contentLength = -1;
  private boolean chunked;
  private boolean otherTransferCoding;
  private boolean connectionClose;
  private boolean connectionKeepAlive;
  private long remaining;
  private byte[] body = NO_BODY; // replaced, never written, on the first byte kept
  private int bodyLength;
  private boolean bodyTruncated;
  private String problem;

  HttpResponseParser(boolean headRequest, boolean collectBody) {
    this(headRequest, collectBody, List.of());
  }

  /**
   * @param wanted the headers whose values to keep ({@code headerMatch}); empty keeps none
   */
  HttpResponseParser(boolean headRequest, boolean collectBody, List<CheckSpec.HeaderMatch> wanted) {
    this.headRequest = headRequest;
    this.collectBody = collectBody;
    this.wanted = wanted;
  }

  /** Consumes bytes; check the state afterwards. Ignores input once complete or malformed. */
  void feed(byte[] bytes, int offset, int length) {
    int i = offset;
    int end = offset + length;
    while (i < end && state != State.DONE && state != State.MALFORMED) {
      switch (state) {
        case BODY_LENGTH, CHUNK_DATA -> {
          int n = (int) Math.min(remaining, end - i);
          appendBody(bytes, i, n);
          i += n;
          remaining -= n;
          if (remaining == 0) {
            state = state == State.BODY_LENGTH ? State.DONE : State.CHUNK_DATA_END;
          }
        }
        case BODY_UNTIL_CLOSE -> {
          appendBody(bytes, i, end - i);
          i = end;
        }
        default -> i = readLine(bytes, i, end);
      }
    }
  }

  /** The connection closed: a body delimited by the close is now complete. */
  void endOfInput() {
    if (state == State.BODY_UNTIL_CLOSE) {
      state = State.DONE;
    }
  }

  private int readLine(byte[] bytes, int from, int end) {
    int i = from;
    while (i < end) {
      byte b = bytes[i++];
      if (state == State.STATUS_LINE && !statusPrefixOk(lineLength, b)) {
        lineLength = appendByte(lineLength, b);
        statusLine = new String(line, 0, lineLength, StandardCharsets.ISO_8859_1);
        return malformed("malformed status line: " + StatusLineClassifier.excerpt(statusLine));
      }
      if (b == '\n') {
        int n = lineLength > 0 && line[lineLength - 1] == '\r' ? lineLength - 1 : lineLength;
        String text = new String(line, 0, n, StandardCharsets.ISO_8859_1);
        lineLength = 0;
        onLine(text);
        return i;
      }
      if (state == State.STATUS_LINE || state == State.HEADERS) {
        if (++headBytes > MAX_HEAD) {
          return malformed("headers larger than " + (MAX_HEAD / 1024) + " KiB");
        }
      } else if (lineLength >= MAX_CHUNK_LINE) {
        return malformed("chunk framing line too long");
      }
      lineLength = appendByte(lineLength, b);
    }
    return i;
  }

  /** Whether byte {@code b} at {@code position} of the status line can still be well formed. */
  private static boolean statusPrefixOk(int position, byte b) {
    if (position < STATUS_SHAPE.length()) {
      char want = STATUS_SHAPE.charAt(position);
      return want == 'd' ? b >= '0' && b <= '9' : b == want;
    }
    if (position == STATUS_SHAPE.length()) {
      return b == ' ' || b == '\r' || b == '\n';
    }
    return true;
  }

  private int appendByte(int at, byte b) {
    if (at == line.length) {
      line = Arrays.copyOf(line, line.length * 2);
    }
    line[at] = b;
    return at + 1;
  }

  private void onLine(String text) {
    switch (state) {
      case STATUS_LINE -> {
        statusLine = text;
        statusCode = StatusLineClassifier.parseCode(text);
        if (statusCode < 0) {
          malformed("malformed status line: " + StatusLineClassifier.excerpt(text));
          return;
        }
        http10 = text.startsWith("HTTP/1.0");
        state = State.HEADERS;
      }
      case HEADERS -> {
        if (text.isEmpty()) {
          endOfHead();
        } else {
          header(text);
        }
      }
      case CHUNK_SIZE -> chunkSize(text);
      case CHUNK_DATA_END -> {
        if (!text.isEmpty()) {
          malformed("malformed chunk");
          return;
        }
        state = State.CHUNK_SIZE;
      }
      case TRAILERS -> {
        if (text.isEmpty()) {
          state = State.DONE;
        }
      }
      default -> throw new IllegalStateException(state.name());
    }
  }

  private void header(String text) {
    if (text.charAt(0) == ' ' || text.charAt(0) == '\t') {
      return; // obsolete line folding: continuation of a header we do not interpret
    }
    int colon = text.indexOf(':');
    if (colon <= 0) {
      malformed("malformed header line");
      return;
    }
    String name = text.substring(0, colon).trim().toLowerCase(Locale.ROOT);
    if (!wanted.isEmpty()) {
      keep(name, text, colon);
    }
    switch (name) {
      case "content-length" -> contentLength(value(text, colon));
      case "transfer-encoding" -> {
        String value = value(text, colon);
        chunked = value.endsWith("chunked");
        otherTransferCoding = !chunked;
      }
      case "connection" -> {
        String value = value(text, colon);
        connectionClose |= value.contains("close");
        connectionKeepAlive |= value.contains("keep-alive");
      }
      default -> {}
    }
  }

  /** A Content-Length: a number, and the same one where the response repeats the header. */
  private void contentLength(String value) {
    long length;
    try {
      length = Long.parseLong(value);
    } catch (NumberFormatException e) {
      length = -2;
    }
    if (length < 0 || (contentLength >= 0 && contentLength != length)) {
      malformed("invalid Content-Length");
      return;
    }
    contentLength = length;
  }

  /** The value of a header line whose name framing reads, lower case (other values stay unread). */
  private static String value(String line, int colon) {
    return line.substring(colon + 1).trim().toLowerCase(Locale.ROOT);
  }

  private void keep(String name, String line, int colon) {
    for (CheckSpec.HeaderMatch m : wanted) {
      if (m.name().equalsIgnoreCase(name)) {
        if (kept == null) {
          kept = new ArrayList<>(2);
        }
        kept.add(new String[] {name, line.substring(colon + 1).trim()});
        return;
      }
    }
  }

  private void endOfHead() {
    if (statusCode >= 100 && statusCode < 200 && statusCode != 101) {
      statusCode = -1; // an interim response: the real one follows
      statusLine = null;
      kept = null;
      contentLength = -1;
      chunked = false;
      otherTransferCoding = false;
      state = State.STATUS_LINE;
      return;
    }
    if (headRequest || statusCode == 204 || statusCode == 304 || statusCode == 101) {
      state = State.DONE;
    } else if (chunked) {
      state = State.CHUNK_SIZE;
    } else if (otherTransferCoding || contentLength < 0) {
      state = State.BODY_UNTIL_CLOSE;
    } else if (contentLength == 0) {
      state = State.DONE;
    } else {
      remaining = contentLength;
      state = State.BODY_LENGTH;
    }
  }

  private void chunkSize(String text) {
    int semicolon = text.indexOf(';');
    String hex = (semicolon < 0 ? text : text.substring(0, semicolon)).trim();
    long size;
    try {
      size = hex.isEmpty() || hex.length() > 15 ? -1 : Long.parseLong(hex, 16);
    } catch (NumberFormatException e) {
      size = -1;
    }
    if (size < 0) {
      malformed("malformed chunk size");
      return;
    }
    if (size == 0) {
      state = State.TRAILERS;
    } else {
      remaining = size;
      state = State.CHUNK_DATA;
    }
  }

  private void appendBody(byte[] bytes, int offset, int length) {
    if (!collectBody || length == 0) {
      return;
    }
    int room = BODY_LIMIT - bodyLength;
    int n = Math.min(room, length);
    if (n < length) {
      bodyTruncated = true;
    }
    if (n > 0) {
      if (bodyLength + n > body.length) {
        body = Arrays.copyOf(body, Math.min(BODY_LIMIT, Math.max(bodyLength + n, body.length * 2)));
      }
      System.arraycopy(bytes, offset, body, bodyLength, n);
      bodyLength += n;
    }
  }

  private int malformed(String why) {
    problem = why;
    state = State.MALFORMED;
    return Integer.MAX_VALUE;
  }

  boolean isMalformed() {
    return state == State.MALFORMED;
  }

  /** Why the response is malformed, or null. */
  String problem() {
    return problem;
  }

  /** Whether the status line and all headers are in (and the response is not malformed). */
  boolean headComplete() {
    return state != State.STATUS_LINE && state != State.HEADERS && state != State.MALFORMED;
  }

  /** Whether the whole response, body included, is in. */
  boolean complete() {
    return state == State.DONE;
  }

  /** Whether the body kept so far reached {@link #BODY_LIMIT} (the rest is not needed). */
  boolean bodyLimitReached() {
    return bodyLength >= BODY_LIMIT;
  }

  boolean bodyTruncated() {
    return bodyTruncated;
  }

  /** The first line of the response, once read (also when it is malformed), else null. */
  String statusLine() {
    return statusLine;
  }

  /** Whether any byte of a status line has been received but not yet a full line. */
  boolean partialStatusLine() {
    return state == State.STATUS_LINE && lineLength > 0;
  }

  /** The partial first line received so far (for a close in the middle of it). */
  String partialLine() {
    return new String(line, 0, lineLength, StandardCharsets.ISO_8859_1);
  }

  int statusCode() {
    return statusCode;
  }

  /** The values received for a wanted header (any case), in order; empty when none. */
  List<String> headerValues(String name) {
    if (kept == null) {
      return List.of();
    }
    List<String> out = new ArrayList<>(1);
    for (String[] h : kept) {
      if (h[0].equalsIgnoreCase(name)) {
        out.add(h[1]);
      }
    }
    return out;
  }

  /** The kept body prefix (at most {@link #BODY_LIMIT} bytes), decoded as UTF-8. */
  String bodyText() {
    return new String(body, 0, bodyLength, StandardCharsets.UTF_8);
  }

  /** Whether the connection may carry another request after this complete response. */
  boolean reusable() {
    return complete()
        && statusCode != 101
        && !connectionClose
        && (!http10 || connectionKeepAlive)
        && (headRequest || chunked || contentLength >= 0 || statusCode == 204 || statusCode == 304);
  }
}
