package dev.vigil.security;

/** The request headers Vigil's own ports read before anything else: the token and the length. */
public final class RequestHeaders {
  private RequestHeaders() {}

  /** The token of {@code Authorization: Bearer <token>}, or null when there is none. */
  public static String bearer(String authorization) {
    String h = authorization;
    if (h == null || h.length() <= 7 || !h.regionMatches(true, 0, "Bearer ", 0, 7)) {
      return null;
    }
    String token = h.substring(7).trim();
    return token.isEmpty() ? null : token;
  }

  /** {@code Content-Length} as a number, or -1 when absent or not a number. */
  public static long contentLength(String header) {
    try {
      return header == null ? -1 : Long.parseLong(header.trim());
    } catch (NumberFormatException e) {
      return -1;
    }
  }
}
