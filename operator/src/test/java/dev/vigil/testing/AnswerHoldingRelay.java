package dev.vigil.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A loopback TCP relay in front of a TLS server that loses the server's answer, as a network does
 * when the server dies after it took a request: it passes the TLS 1.3 handshake (the client's first
 * flight, the server's flight), then holds every byte the server sends once the client sent its
 * second flight (its Finished and the request), and closes the client's connection when the test
 * calls {@link #cut()}. The client gets no answer; the server took the whole request. One
 * connection; the client must use TLS 1.3 (TLS 1.2 needs a server flight after the client's
 * Finished) and HTTP/1.1.
 */
public final class AnswerHoldingRelay implements AutoCloseable {
  private final ServerSocket listener;
  private final int target;
  private final AtomicBoolean serverSpoke = new AtomicBoolean();
  private final AtomicBoolean holding = new AtomicBoolean();
  private volatile Socket client;
  private volatile Socket server;
  private volatile long held;

  public AnswerHoldingRelay(int target) {
    this.target = target;
    try {
      listener = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    Thread accept = new Thread(this::accept, "answer-holding-relay");
    accept.setDaemon(true);
    accept.start();
  }

  public int port() {
    return listener.getLocalPort();
  }

  /** Bytes of the server's answer held back so far. */
  public long held() {
    return held;
  }

  private void accept() {
    try {
      client = listener.accept();
      server = new Socket(InetAddress.getByName("127.0.0.1"), target);
      Thread up = new Thread(() -> pump(client, server, true), "relay-up");
      up.setDaemon(true);
      up.start();
      pump(server, client, false);
    } catch (IOException e) {
      // closed by cut() or close()
    }
  }

  private void pump(Socket from, Socket to, boolean fromClient) {
    byte[] buf = new byte[16 * 1024];
    try {
      InputStream in = from.getInputStream();
      OutputStream out = to.getOutputStream();
      int n;
      while ((n = in.read(buf)) >= 0) {
        if (fromClient) {
          if (serverSpoke.get()) {
            holding.set(true);
          }
        } else {
          serverSpoke.set(true);
          if (holding.get()) {
            held += n;
            continue;
          }
        }
        out.write(buf, 0, n);
        out.flush();
      }
    } catch (IOException e) {
      // one side closed
    }
  }

  /** Closes the client's connection without an answer (and the server's). */
  public void cut() {
    closeQuietly(client);
    closeQuietly(server);
  }

  @Override
  public void close() {
    cut();
    closeQuietly(listener);
  }

  private static void closeQuietly(java.io.Closeable c) {
    if (c == null) {
      return;
    }
    try {
      c.close();
    } catch (IOException e) {
      // closing
    }
  }
}
