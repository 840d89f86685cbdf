package dev.vigil.e2e;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

/**
 * Extra backends and addresses on the test hosts of {@code e2e/netns.sh}, for tests that need more
 * than one backend per host: {@code e2e/backend.py} processes bound to any address and port of a
 * host, in a fixed mode, each counting the requests it gets (its own log); and secondary addresses
 * ({@code /32}) on a host's interface, so one process serves many Pod IPs and "killing" one is
 * deleting its address (its probes then time out, as with a node that is gone). {@link #close()}
 * stops every process and deletes every address it added.
 */
final class HostBackends implements AutoCloseable {
  private final E2eCluster cluster;
  private final Path dir;
  private final Map<String, Process> processes = new LinkedHashMap<>();
  private final List<String[]> aliases = new ArrayList<>();

  HostBackends(E2eCluster cluster) {
    this.cluster = cluster;
    try {
      this.dir = Files.createTempDirectory("vigil-e2e-host-backends");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * {@code e2e/backend.py} in host {@code host}'s namespace on {@code bind:port}, in {@code mode}.
   */
  void start(String name, int host, String bind, int port, String mode) {
    start(name, host, bind, port, mode, Map.of());
  }

  /** As {@link #start(String, int, String, int, String)}, with {@code env} (e.g. BACKEND_TLS_*). */
  void start(String name, int host, String bind, int port, String mode, Map<String, String> env) {
    try {
      Files.writeString(dir.resolve(name + ".mode"), mode + "\n");
      ProcessBuilder pb =
          TestHosts.backendProcess(cluster, host, bind, port, dir.resolve(name + ".mode"), "900")
              .redirectErrorStream(true)
              .redirectOutput(dir.resolve(name + ".log").toFile());
      pb.environment().put("BACKEND_LOG_REQUESTS", "1");
      pb.environment().putAll(env);
      processes.put(name, pb.start());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    TestHosts.awaitStarted(
        processes.get(name),
        () -> log(name).contains("listening on"),
        () -> "backend " + name + " did not start: " + log(name));
  }

  /**
   * Starts backend {@code name} with HAProxy's agent check on {@code agentPort} of its address too,
   * answering what {@link #agent} last wrote ("up" until then).
   */
  void startWithAgent(String name, int host, String bind, int port, int agentPort) {
    agent(name, "up");
    start(
        name,
        host,
        bind,
        port,
        "healthy",
        Map.of(
            "BACKEND_AGENT_PORT",
            Integer.toString(agentPort),
            "BACKEND_AGENT_FILE",
            dir.resolve(name + ".agent").toString()));
  }

  /** The line backend {@code name}'s agent answers from now on. */
  void agent(String name, String reply) {
    try {
      Files.writeString(dir.resolve(name + ".agent"), reply + "\n");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Switches backend {@code name} to {@code mode} (a mode of {@code e2e/backend.py}, read on each
   * request).
   */
  void mode(String name, String mode) {
    try {
      Files.writeString(dir.resolve(name + ".mode"), mode + "\n");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * When backend {@code name} first answered a request with a 5xx at or after {@code sinceMs}
   * (epoch ms, its own clock: the {@code failed} lines of its log), or empty if it has not.
   */
  OptionalLong firstFailure(String name, long sinceMs) {
    return log(name)
        .lines()
        .filter(l -> l.startsWith("failed "))
        .mapToLong(l -> Long.parseLong(l.substring(l.lastIndexOf(' ') + 1)))
        .filter(ms -> ms >= sinceMs)
        .findFirst();
  }

  /** Stops backend {@code name} (its address stays: connections to it are refused). */
  void stop(String name) {
    TestHosts.stopProcess(processes.remove(name));
  }

  /** Requests backend {@code name} has received, from its own log. */
  long requests(String name) {
    return log(name).lines().filter(l -> l.startsWith("request ")).count();
  }

  /** Adds {@code ip/32} to host {@code host}'s interface. */
  void addAddress(int host, String ip) {
    ip("-n", "vigil-h" + host, "addr", "add", ip + "/32", "dev", "eth0");
    aliases.add(new String[] {Integer.toString(host), ip});
  }

  /** Deletes {@code ip/32} from host {@code host}: the backend at that address is gone. */
  void deleteAddress(int host, String ip) {
    ip("-n", "vigil-h" + host, "addr", "del", ip + "/32", "dev", "eth0");
    aliases.removeIf(a -> a[0].equals(Integer.toString(host)) && a[1].equals(ip));
  }

  @Override
  public void close() {
    for (Process p : processes.values()) {
      TestHosts.stopProcess(p);
    }
    processes.clear();
    for (String[] a : List.copyOf(aliases)) {
      try {
        deleteAddress(Integer.parseInt(a[0]), a[1]);
      } catch (AssertionError e) {
        // already gone
      }
    }
  }

  private void ip(String... args) {
    List<String> command = new ArrayList<>(List.of("ip"));
    command.addAll(List.of(args));
    cluster.run(java.time.Duration.ofSeconds(10), null, command.toArray(String[]::new)).assertOk();
  }

  private String log(String name) {
    try {
      return Files.readString(dir.resolve(name + ".log"));
    } catch (IOException e) {
      return "";
    }
  }
}
