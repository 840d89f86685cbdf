package dev.vigil.e2e;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Each checker's own path to the test hosts, and the faults cut into it: source addresses ({@code
 * /32}) on the bridge {@code vigil-br0} of {@code e2e/netns.sh}, one per operator process ({@code
 * --probe-source-address}), and {@code iptables} rules in the root namespace's {@code OUTPUT} chain
 * that match one source address and the hosts' network ({@code 198.18.0.0/24}; never the API
 * server, which listens on 127.0.0.1). Every rule carries the comment {@value #TAG}; {@link
 * #close()} deletes the rules (also any a crashed run left) and the addresses, and {@code
 * e2e/netns.sh down} deletes tagged rules too.
 */
final class CheckerNetwork implements AutoCloseable {
  static final String BRIDGE = "vigil-br0";
  static final String HOSTS = "198.18.0.0/24";
  static final String TAG = "vigil-e2e-checker";

  /** One rule in place; {@link #heal()} deletes it. */
  final class Fault {
    private final List<String> spec;

    private Fault(List<String> spec) {
      this.spec = spec;
    }

    void heal() {
      if (rules.remove(this)) {
        iptables("-D", spec);
      }
    }
  }

  private final E2eCluster cluster;
  private final List<String> addresses = new ArrayList<>();
  private final List<Fault> rules = new ArrayList<>();

  CheckerNetwork(E2eCluster cluster) {
    this.cluster = cluster;
    E2eCluster.require(
        cluster.run(Duration.ofSeconds(10), null, "sh", "-c", "command -v iptables").exit() == 0,
        "iptables is missing: e2e/netns.sh up installs it (apt-get install iptables)");
    removeTaggedRules();
  }

  /** Adds {@code ip/32} to the bridge (replacing a leftover of an earlier run). */
  void addSource(String ip) {
    run("ip", "addr", "replace", ip + "/32", "dev", BRIDGE);
    addresses.add(ip);
  }

  /** Drops every packet {@code source} sends to the test hosts: the checker's path is cut. */
  Fault cut(String source) {
    return insert(List.of("-s", source, "-d", HOSTS));
  }

  /** Drops each packet {@code source} sends to the test hosts with probability {@code p}. */
  Fault lossy(String source, double p) {
    return insert(
        List.of(
            "-s",
            source,
            "-d",
            HOSTS,
            "-m",
            "statistic",
            "--mode",
            "random",
            "--probability",
            Double.toString(p)));
  }

  private Fault insert(List<String> match) {
    List<String> spec = new ArrayList<>(List.of("OUTPUT"));
    spec.addAll(match);
    spec.addAll(List.of("-m", "comment", "--comment", TAG, "-j", "DROP"));
    Fault fault = new Fault(spec);
    iptables("-I", spec);
    rules.add(fault);
    return fault;
  }

  /** Deletes every rule in place: each checker's path is whole again. */
  void healAll() {
    for (Fault f : List.copyOf(rules)) {
      f.heal();
    }
  }

  @Override
  public void close() {
    try {
      healAll();
      removeTaggedRules();
    } finally {
      for (String ip : addresses) {
        cluster.run(Duration.ofSeconds(10), null, "ip", "addr", "del", ip + "/32", "dev", BRIDGE);
      }
      addresses.clear();
    }
  }

  /** Deletes every rule tagged {@value #TAG} in OUTPUT, as {@code iptables -S} lists them. */
  private void removeTaggedRules() {
    String listed = run("iptables", "-S", "OUTPUT").out();
    for (String line : listed.lines().filter(l -> l.contains(TAG)).toList()) {
      List<String> spec = new ArrayList<>(List.of(line.trim().split("\\s+")));
      spec.remove(0); // -A
      iptables("-D", spec);
    }
  }

  private void iptables(String op, List<String> spec) {
    List<String> command = new ArrayList<>(List.of("iptables", "-w", "5", op));
    command.addAll(spec);
    run(command.toArray(String[]::new));
  }

  private E2eCluster.Result run(String... command) {
    return cluster.run(Duration.ofSeconds(15), null, command).assertOk();
  }
}
