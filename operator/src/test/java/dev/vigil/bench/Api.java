package dev.vigil.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigil.e2e.E2eCluster;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodIP;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.Stream;

/**
 * The load run's API server: the embedded mock server in a JVM of its own ({@link ApiServerMain},
 * which counts every request), or a real kube-apiserver (e2e/control-plane.sh) whose audit log
 * counts the writes. {@link #stats} returns writes by kind, as {@code "METHOD kind"}, plus {@code
 * "GET reads"} where the server can count reads (the mock server only: the real control plane's
 * audit policy records writes alone).
 */
abstract class Api {
  private final KubernetesClient client;
  private final String namespace;

  private Api(KubernetesClient client, String namespace) {
    this.client = client;
    this.namespace = namespace;
  }

  KubernetesClient client() {
    return client;
  }

  String namespace() {
    return namespace;
  }

  abstract Map<String, Long> stats() throws IOException;

  /** Creates a Pod that runs, as a kubelet would report it. */
  abstract void createRunningPod(Pod pod);

  abstract void close();

  static Api mock(List<Process> children) throws IOException {
    Process process =
        new ProcessBuilder(
                "java",
                "-Xmx2g",
                "-cp",
                System.getProperty("java.class.path"),
                ApiServerMain.class.getName())
            .redirectError(new File("/tmp/vigil-operator-load-api.log"))
            .start();
    children.add(process);
    BufferedReader out =
        new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    PrintWriter in =
        new PrintWriter(
            new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8), true);
    String url = null;
    for (String line; (line = out.readLine()) != null; ) {
      if (line.startsWith("URL ")) {
        url = line.substring(4);
        break;
      }
    }
    KubernetesClient client =
        new KubernetesClientBuilder()
            .withConfig(
                new ConfigBuilder()
                    .withMasterUrl(url)
                    .withTrustCerts(true)
                    .withRequestTimeout(60_000)
                    .build())
            .build();
    return new Api(client, "bench") {
      @Override
      Map<String, Long> stats() throws IOException {
        in.println("STATS");
        String line = out.readLine();
        Map<String, Long> m = new TreeMap<>();
        for (String part : line.replaceAll("[{}\"]", "").split(",")) {
          if (!part.isBlank()) {
            String[] kv = part.split(":");
            m.put(kv[0], Long.parseLong(kv[1]));
          }
        }
        return m;
      }

      @Override
      void createRunningPod(Pod pod) {
        client.resource(pod).create();
      }

      @Override
      void close() {
        client.close();
        in.println("QUIT");
      }
    };
  }

  /** A real API server: the kubeconfig's admin, a fresh namespace, writes from the audit log. */
  static Api real(String kubeconfig, String auditLog) throws IOException {
    KubernetesClient client =
        new KubernetesClientBuilder()
            .withConfig(
                new ConfigBuilder(Config.fromKubeconfig(Files.readString(Path.of(kubeconfig))))
                    .withRequestTimeout(60_000)
                    .build())
            .build();
    String ns = "bench-" + Long.toString(ThreadLocalRandom.current().nextLong(1L << 30), 36);
    client
        .namespaces()
        .resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
        .create();
    ObjectMapper json = new ObjectMapper();
    return new Api(client, ns) {
      @Override
      Map<String, Long> stats() throws IOException {
        Map<String, Long> m = new TreeMap<>();
        try (Stream<String> lines = Files.lines(Path.of(auditLog))) {
          lines.forEach(
              line -> {
                try {
                  JsonNode e = json.readTree(line);
                  JsonNode ref = e.path("objectRef");
                  if (!ns.equals(ref.path("namespace").asText())) {
                    return;
                  }
                  String resource = ref.path("resource").asText();
                  String kind =
                      resource.equals("endpointslices")
                          ? "endpointslices"
                          : ref.has("subresource")
                                  && ref.path("subresource").asText().equals("status")
                              ? "status"
                              : resource.equals("events") ? "events" : resource;
                  m.merge(e.path("verb").asText() + " " + kind, 1L, Long::sum);
                } catch (IOException ex) {
                  // a line cut by rotation: ignore
                }
              });
        }
        return m;
      }

      @Override
      void createRunningPod(Pod want) {
        want.getStatus().setPodIPs(List.of(new PodIP(want.getStatus().getPodIP())));
        E2eCluster.createWithStatus(client, want);
      }

      @Override
      void close() {
        // Services hold ClusterIPs from the control plane's small service range; without a
        // namespace controller nothing else frees them for the next run.
        client.services().inNamespace(ns).delete();
        client.close();
      }
    };
  }
}
