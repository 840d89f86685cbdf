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
        return tls(failure, t, latencyMs);
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

  /**
   * A TLS failure with the reason a user can act on: a server certificate from an unknown CA, a
   * client certificate the server demands or refuses (the alert it sent), else the JDK's message.
   */
  private static ProbeResult tls(Throwable failure, Throwable ssl, long latencyMs) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      String message = t.getMessage() == null ? "" : t.getMessage();
      if (t instanceof java.security.cert.CertPathBuilderException
          || message.contains("PKIX path building failed")
          || message.contains("unable to find valid certification path")) {
        return ProbeResult.fail(
            Reason.TLS_UNKNOWN_CA,
            "tls: certificate signed by unknown authority (unknown CA)",
            latencyMs);
      }
      String alert = alert(message);
      if (alert != null && alert.equals("certificate_required")) {
        return ProbeResult.fail(
            Reason.TLS_CLIENT_CERTIFICATE, "tls: client certificate required", latencyMs);
      }
      if (alert != null && CLIENT_CERTIFICATE_ALERTS.contains(alert)) {
        return ProbeResult.fail(
            Reason.TLS_CLIENT_CERTIFICATE,
            "tls: client certificate required or refused (server alert " + alert + ")",
            latencyMs);
      }
    }
    return ProbeResult.fail(Reason.TLS, "tls: " + shortMessage(ssl), latencyMs);
  }

  /**
   * Alerts a server sends about the client's certificate: none sent where one is required (TLS 1.2
   * servers send bad_certificate or handshake_failure), or one it does not trust.
   */
  private static final java.util.Set<String> CLIENT_CERTIFICATE_ALERTS =
      java.util.Set.of(
          "bad_certificate",
          "unknown_ca",
          "certificate_unknown",
          "unsupported_certificate",
          "certificate_revoked",
          "certificate_expired");

  /** The alert named in a JDK "Received fatal alert: NAME" message, or null. */
  private static String alert(String message) {
    String prefix = "Received fatal alert: ";
    int at = message.indexOf(prefix);
    return at < 0 ? null : message.substring(at + prefix.length()).trim();
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
