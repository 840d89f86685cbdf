package dev.vigil.bench;

import dev.vigil.demo.EmbeddedApiServer;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * The embedded API server in a process of its own, so a load run measures the operator's CPU alone.
 * Prints {@code URL <url>}; on stdin, {@code STATS} prints the writes it received by kind (and the
 * reads, as {@code GET reads}: every GET that is not a watch) as one JSON line, {@code QUIT} exits.
 */
public final class ApiServerMain {
  private ApiServerMain() {}

  public static void main(String[] args) throws Exception {
    EmbeddedApiServer api = EmbeddedApiServer.start();
    Map<String, LongAdder> writes = new ConcurrentHashMap<>();
    Thread drain =
        new Thread(
            () -> {
              try {
                while (true) {
                  RecordedRequest r = api.server().takeRequest(1, TimeUnit.SECONDS);
                  if (r != null && !"GET".equals(r.getMethod())) {
                    writes.computeIfAbsent(kind(r), k -> new LongAdder()).increment();
                  } else if (r != null && !r.getPath().contains("watch=true")) {
                    writes.computeIfAbsent("GET reads", k -> new LongAdder()).increment();
                  }
                }
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            },
            "drain");
    drain.setDaemon(true);
    drain.start();
    System.out.println("URL " + api.client().getMasterUrl());
    System.out.flush();
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line; (line = in.readLine()) != null; ) {
      if (line.equals("STATS")) {
        Map<String, Long> snapshot = new TreeMap<>();
        writes.forEach((k, v) -> snapshot.put(k, v.sum()));
        // not a request count: the API server's own CPU so far, to tell its cost from Vigil's
        snapshot.put(
            "cpu_ms",
            ((com.sun.management.OperatingSystemMXBean)
                        java.lang.management.ManagementFactory.getOperatingSystemMXBean())
                    .getProcessCpuTime()
                / 1_000_000);
        StringBuilder sb = new StringBuilder("{");
        snapshot.forEach(
            (k, v) ->
                sb.append(sb.length() > 1 ? "," : "")
                    .append('"')
                    .append(k)
                    .append("\":")
                    .append(v));
        System.out.println(sb.append('}'));
        System.out.flush();
      } else if (line.equals("QUIT")) {
        break;
      }
    }
    System.exit(0);
  }

  private static String kind(RecordedRequest r) {
    String p = r.getPath();
    String what =
        p.contains("/endpointslices")
            ? "endpointslices"
            : p.contains("/status")
                ? "status"
                : p.contains("/events") ? "events" : p.contains("/services") ? "services" : "other";
    return r.getMethod() + " " + what;
  }
}
