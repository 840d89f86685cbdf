package dev.vigil.bench;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntFunction;

/**
 * The load run's backends: farm.py on loopback addresses (for the mock API server), or an {@link
 * AddressFarm} on 198.19.x.y addresses inside a test host's network namespace (for a real API
 * server, which refuses loopback endpoint addresses). Both take farm.py's control lines.
 */
final class Farm {
  private final IntFunction<String> ip;
  private final String ctlHost;
  private final int ctlPort;

  private Farm(IntFunction<String> ip, String ctlHost, int ctlPort) {
    this.ip = ip;
    this.ctlHost = ctlHost;
    this.ctlPort = ctlPort;
  }

  String ip(int i) {
    return ip.apply(i);
  }

  /** One farm.py control line, e.g. {@code set refuse 0,10,20}; returns the JSON answer. */
  String control(String line) throws IOException {
    try (Socket s = new Socket(ctlHost, ctlPort)) {
      s.getOutputStream().write((line + "\n").getBytes(StandardCharsets.UTF_8));
      s.getOutputStream().flush();
      return new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8))
          .readLine();
    }
  }

  /** A number field of a farm's JSON answer, or -1 (the address farm counts nothing). */
  static double number(String json, String field) {
    if (json == null) {
      return -1;
    }
    java.util.regex.Matcher m =
        java.util.regex.Pattern.compile("\"" + field + "\":\\s*([0-9.eE+-]+)").matcher(json);
    return m.find() ? Double.parseDouble(m.group(1)) : -1;
  }

  /** farm.py, ips layout: 127.2.x.y:8080. */
  static Farm python(String farmDir, int n, int ctlPort, List<Process> children)
      throws IOException {
    Process farm =
        new ProcessBuilder(
                "python3",
                new File(farmDir, "farm.py").getPath(),
                "-n",
                Integer.toString(n),
                "--layout",
                "ips",
                "--ip-second-octet",
                "2",
                "--base-port",
                "8080",
                "--ctl-port",
                Integer.toString(ctlPort),
                "--max-seconds",
                "1800")
            .redirectErrorStream(true)
            .redirectOutput(new File("/tmp/vigil-operator-load-farm.log"))
            .start();
    children.add(farm);
    return new Farm(i -> "127.2." + (i / 250) + "." + (i % 250 + 1), "127.0.0.1", ctlPort);
  }

  /**
   * An AddressFarm inside network namespace {@code netns}, whose eth0 already carries the addresses
   * 198.19.(i / 250).(i % 250 + 1) (bench/operator-load-real.sh adds them), controlled on the
   * host's own address 198.18.0.11:19995.
   */
  static Farm addresses(int n, String netns, List<Process> children) throws IOException {
    IntFunction<String> ip = i -> "198.19." + (i / 250) + "." + (i % 250 + 1);
    List<String> lines = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      lines.add(ip.apply(i));
    }
    Path file = Files.createTempFile("vigil-farm-addresses", ".txt");
    Files.write(file, lines);
    Process farm =
        new ProcessBuilder(
                "ip",
                "netns",
                "exec",
                netns,
                "java",
                "-Xmx512m",
                "-cp",
                System.getProperty("java.class.path"),
                AddressFarm.class.getName(),
                "--addresses",
                file.toString(),
                "--port",
                "8080",
                "--ctl",
                "198.18.0.11:19995",
                "--max-seconds",
                "1800")
            .redirectError(new File("/tmp/vigil-operator-load-farm.log"))
            .start();
    children.add(farm);
    BufferedReader out =
        new BufferedReader(new InputStreamReader(farm.getInputStream(), StandardCharsets.UTF_8));
    String line = out.readLine();
    if (line == null || !line.startsWith("READY")) {
      throw new UncheckedIOException(
          new IOException("address farm did not start; see /tmp/vigil-operator-load-farm.log"));
    }
    return new Farm(ip, "198.18.0.11", 19995);
  }
}
