package dev.vigil.e2e;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Real HTTP backends on the test hosts that {@code e2e/netns.sh up N} creates: host {@code i} is
 * network namespace {@code vigil-h<i>} at {@code 198.18.0.<10+i>}, reachable from the root
 * namespace where the operator runs in the test JVM. Each backend is a separate process, {@code ip
 * netns exec vigil-h<i> python3 e2e/backend.py}, whose answer a mode file switches; "refuse" is the
 * process stopped. {@link #close()} stops every process, also when a test fails.
 */
public final class TestHosts implements AutoCloseable {
  /** How a backend answers. */
  public enum Mode {
    HEALTHY,
    FAILING,
    HANG,
    REFUSE
  }

  private final E2eCluster cluster;
  private final int port;
  private final Path dir;
  private final Map<Integer, Process> processes = new TreeMap<>();

  public TestHosts(E2eCluster cluster, int port) {
    this.cluster = cluster;
    this.port = port;
    try {
      this.dir = Files.createTempDirectory("vigil-e2e-hosts");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public static String address(int host) {
    return "198.18.0." + (10 + host);
  }

  public int port() {
    return port;
  }

  /** Starts (or restarts) the backend on host {@code i} and waits until it accepts. */
  public void start(int host) {
    stop(host);
    try {
      Process p =
          backendProcess(cluster, host, address(host), port, modeFile(host))
              .redirectErrorStream(true)
              .redirectOutput(dir.resolve("h" + host + ".log").toFile())
              .start();
      processes.put(host, p);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    awaitStarted(
        processes.get(host),
        () -> accepts(host),
        () -> "backend on " + address(host) + ":" + port + " did not start: " + log(host));
  }

  /**
   * {@code e2e/backend.py} in host {@code host}'s network namespace on {@code bind:port}, reading
   * its mode from {@code modeFile}, with {@code more} arguments.
   */
  static ProcessBuilder backendProcess(
      E2eCluster cluster, int host, String bind, int port, Path modeFile, String... more) {
    List<String> args = new ArrayList<>(List.of(bind, Integer.toString(port), modeFile.toString()));
    args.addAll(List.of(more));
    return new ProcessBuilder(inHost(cluster, host, "e2e/backend.py", args));
  }

  /** The command that runs the Python {@code script} in host {@code host}'s network namespace. */
  static List<String> inHost(E2eCluster cluster, int host, String script, List<String> args) {
    List<String> command =
        new ArrayList<>(
            List.of(
                "ip",
                "netns",
                "exec",
                "vigil-h" + host,
                "python3",
                cluster.path(script).toString()));
    command.addAll(args);
    return command;
  }

  /** Waits up to 20 s until {@code started}; fails with {@code failure} if {@code process} dies. */
  static void awaitStarted(Process process, BooleanSupplier started, Supplier<String> failure) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (!started.getAsBoolean()) {
      if (System.nanoTime() > deadline || !process.isAlive()) {
        throw new AssertionError(failure.get());
      }
      sleep(50);
    }
  }

  /** Switches host {@code i} to {@code mode}; REFUSE stops its process, any other restarts it. */
  public void set(int host, Mode mode) {
    if (mode == Mode.REFUSE) {
      stop(host);
      return;
    }
    try {
      Files.writeString(modeFile(host), mode.name().toLowerCase() + "\n");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    Process p = processes.get(host);
    if (p == null || !p.isAlive()) {
      start(host);
    }
  }

  public void stop(int host) {
    stopProcess(processes.remove(host));
  }

  /** Stops {@code p} (null: nothing), forcibly when it has not ended 5 s after being asked to. */
  static void stopProcess(Process p) {
    if (p != null) {
      p.destroy();
      try {
        if (!p.waitFor(5, TimeUnit.SECONDS)) {
          p.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  @Override
  public void close() {
    for (Integer host : processes.keySet().toArray(Integer[]::new)) {
      stop(host);
    }
  }

  private boolean accepts(int host) {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress(address(host), port), 500);
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  private Path modeFile(int host) {
    return dir.resolve("h" + host + ".mode");
  }

  private String log(int host) {
    try {
      return Files.readString(dir.resolve("h" + host + ".log"));
    } catch (IOException e) {
      return "(no log)";
    }
  }

  /** Sleeps, keeping an interrupt. */
  static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
