package dev.vigil.probe.transport;

import dev.vigil.probe.ProbeResult;
import dev.vigil.probe.Reason;
import java.io.IOException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.SocketTimeoutException;
import java.util.Locale;
import javax.net.ssl.SSLException;

/** Turns a transport exception into a failed {@link ProbeResult} with its own reason. */
public final class TransportFailure {

  private TransportFailure() {}

  public static ProbeResult classify(Throwable failure, long latencyMs) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      String message = t.getMessage() == null ? "" : t.getMessage().toLowerCase(Locale.ROOT);
      if (t instanceof SSLException) {
        return ProbeResult.fail(Reason.TLS, "tls: " + shortMessage(t), latencyMs);
      }
      if (t instanceof SocketTimeoutException
          || t.getClass().getName().equals("io.netty.channel.ConnectTimeoutException")) {
        return ProbeResult.timeout(latencyMs);
      }
      if (t instanceof NoRouteToHostException || message.contains("unreachable")) {
        return ProbeResult.fail(Reason.CONNECTION_ERROR, "host unreachable", latencyMs);
      }
      if (t instanceof ConnectException && message.contains("refused")) {
        return ProbeResult.fail(Reason.CONNECTION_REFUSED, "connection refused", latencyMs);
      }
      if (t instanceof IOException && message.contains("reset")) {
        return ProbeResult.fail(Reason.CONNECTION_RESET, "connection reset", latencyMs);
      }
      if (message.contains("connection was closed") || message.contains("closed channel")) {
        return closed(latencyMs);
      }
    }
    return ProbeResult.fail(Reason.CONNECTION_ERROR, shortMessage(failure), latencyMs);
  }

  /** A connection the peer closed before any response. */
  public static ProbeResult closed(long latencyMs) {
    return ProbeResult.fail(
        Reason.CONNECTION_CLOSED, "connection closed before a response", latencyMs);
  }

  private static String shortMessage(Throwable t) {
    String m = t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
    return m.length() > 80 ? m.substring(0, 80) + "..." : m;
  }
}
