package dev.vigil.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import javax.net.ssl.SSLSocket;

/**
 * Raw loopback sockets for bounds tests: from a chosen source address on 127.0.0.0/8 (so one test
 * plays several tenants), plain or TLS, with a request written by hand and its reply head read.
 */
public final class LoopbackSockets {
  private LoopbackSockets() {}

  /** A port on 127.0.0.1 where nothing listens (bound by a plain socket, then released). */
  public static int closedPort() {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** A plain connection to 127.0.0.1:{@code port} from {@code local} (e.g. "127.0.0.2"). */
  public static Socket from(String local, int port) throws IOException {
    return new Socket(InetAddress.getByName("127.0.0.1"), port, InetAddress.getByName(local), 0);
  }

  /** A TLS connection (trusting the test CA) from {@code local}, after its handshake. */
  public static SSLSocket tlsFrom(String local, int port) throws IOException {
    SSLSocket s =
        (SSLSocket)
            TestTls.trusting()
                .getSocketFactory()
                .createSocket(
                    InetAddress.getByName("127.0.0.1"), port, InetAddress.getByName(local), 0);
    s.startHandshake();
    return s;
  }

  /** Whether the peer closed (a read returns end of stream or fails) within 50 ms. */
  public static boolean closedByPeer(Socket s) throws IOException {
    s.setSoTimeout(50);
    try {
      return s.getInputStream().read() < 0;
    } catch (SocketTimeoutException e) {
      return false;
    } catch (IOException e) {
      return true;
    }
  }

  /**
   * Writes {@code head}, then one more byte every 100 ms (a header that never ends), until the peer
   * closes the connection or {@code atMost} passes: how long after the head it closed, or null when
   * it did not.
   */
  public static Duration trickleUntilClosed(Socket s, String head, Duration atMost)
      throws IOException, InterruptedException {
    OutputStream out = s.getOutputStream();
    out.write(head.getBytes(StandardCharsets.US_ASCII));
    out.flush();
    long start = System.nanoTime();
    while (System.nanoTime() - start < atMost.toNanos()) {
      try {
        out.write('a');
        out.flush();
        Thread.sleep(100);
      } catch (IOException e) {
        return Duration.ofNanos(System.nanoTime() - start);
      }
      if (closedByPeer(s)) {
        return Duration.ofNanos(System.nanoTime() - start);
      }
    }
    return null;
  }

  /**
   * Writes {@code request} if the connection is still open and returns the reply's status line and
   * headers (waiting up to 5 s), or "" when the connection was closed without an answer.
   */
  public static String replyHead(Socket s, String request) {
    try {
      s.setSoTimeout(5_000);
      OutputStream out = s.getOutputStream();
      out.write(request.getBytes(StandardCharsets.US_ASCII));
      out.flush();
    } catch (IOException e) {
      // closed already: read what may have been answered before
    }
    StringBuilder b = new StringBuilder();
    try {
      InputStream in = s.getInputStream();
      int c;
      while ((c = in.read()) >= 0) {
        b.append((char) c);
        if (b.length() >= 4 && b.substring(b.length() - 4).equals("\r\n\r\n")) {
          break;
        }
      }
    } catch (IOException e) {
      // reset: no answer
    }
    return b.toString();
  }
}
