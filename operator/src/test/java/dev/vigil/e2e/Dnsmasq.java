package dev.vigil.e2e;

import java.io.IOException;
import java.net.DatagramSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A real DNS server for the E2E tests: Debian's dnsmasq ({@code dnsmasq-base}, which .ci/run
 * installs when missing) in the foreground on a free loopback UDP port, answering only the names of
 * a hosts file of its own with TTL 1 (nothing forwarded, neither /etc/hosts nor /etc/resolv.conf
 * read). {@link #answer} rewrites the file and sends SIGHUP (dnsmasq re-reads it); {@link #pause}
 * stops the process (SIGSTOP): queries go unanswered, a resolver times out.
 */
final class Dnsmasq implements AutoCloseable {
  private final Path dir;
  private final Path hosts;
  private final int port;
  private final Process process;

  private Dnsmasq() throws IOException, InterruptedException {
    dir = Files.createTempDirectory("vigil-dnsmasq");
    dir.toFile().setReadable(true, false);
    dir.toFile().setExecutable(true, false);
    hosts = dir.resolve("hosts");
    Files.writeString(hosts, "");
    hosts.toFile().setReadable(true, false);
    try (DatagramSocket free = new DatagramSocket(0, java.net.InetAddress.getLoopbackAddress())) {
      port = free.getLocalPort();
    }
    process =
        new ProcessBuilder(
                "dnsmasq",
                "--keep-in-foreground",
                "--conf-file=/dev/null",
                "--port=" + port,
                "--listen-address=127.0.0.1",
                "--bind-interfaces",
                "--no-resolv",
                "--no-hosts",
                "--addn-hosts=" + hosts,
                "--local-ttl=1",
                "--pid-file=" + dir.resolve("pid"),
                "--user=root",
                "--log-facility=-")
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("log").toFile())
            .start();
    Thread.sleep(500);
    if (!process.isAlive()) {
      throw new IllegalStateException("dnsmasq exited: " + Files.readString(dir.resolve("log")));
    }
  }

  static Dnsmasq start() {
    try {
      return new Dnsmasq();
    } catch (IOException e) {
      throw new IllegalStateException("dnsmasq did not start (apt-get install dnsmasq-base)", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** {@code --dns-server}'s value. */
  String server() {
    return "127.0.0.1:" + port;
  }

  /** From now on {@code name} answers exactly {@code addresses}. */
  void answer(String name, String... addresses) {
    StringBuilder b = new StringBuilder();
    for (String a : addresses) {
      b.append(a).append(' ').append(name).append('\n');
    }
    try {
      Files.writeString(hosts, b.toString());
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
    signal("HUP");
  }

  void pause() {
    signal("STOP");
  }

  void resume() {
    signal("CONT");
  }

  private void signal(String name) {
    try {
      Process kill =
          new ProcessBuilder(List.of("kill", "-" + name, Long.toString(process.pid()))).start();
      kill.waitFor(5, TimeUnit.SECONDS);
      Thread.sleep(200);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  @Override
  public void close() {
    resume();
    process.destroy();
    try {
      process.waitFor(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    process.destroyForcibly();
  }
}
