package dev.vigil.inspect;

import dev.vigil.api.v1alpha1.BackendPool;
import dev.vigil.api.v1alpha1.HealthPolicy;
import dev.vigil.reconcile.LabelSelectors;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.PrintStream;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * {@code vigil why POD [-n NS]} and {@code vigil top [-n NS | -A]}, the commands behind {@code
 * kubectl vigil}: they read BackendPools, HealthPolicies, EndpointSlices, Pods and Events with the
 * current kube context (kubectl hands its plugins the environment, {@code KUBECONFIG} included) and
 * print {@link WhyReport} and {@link TopReport}. Read-only: they never write.
 */
public final class InspectCommand {
  private static final String REFUSED = "EjectionRefused";

  private final Supplier<KubernetesClient> clients;
  private final PrintStream out;
  private final PrintStream err;

  public InspectCommand(Console console) {
    this.clients = console.clients();
    this.out = console.out();
    this.err = console.err();
  }

  /** With {@link Console#standard()}. */
  public static InspectCommand standard() {
    return new InspectCommand(Console.standard());
  }

  public static String usage(String command) {
    return command.equals("why")
        ? """
          usage: vigil why POD|TARGET [-n NAMESPACE]
                 (as a kubectl plugin: kubectl vigil why POD)
                 TARGET: a spec.targets address, hostname, or hostname/address

          Why does this Pod get traffic, or not? For every BackendPool that selects the
          Pod: the pool's availability and panic, the Pod's state and reason, the last
          probe (when, latency, detail), ejection and damping with their end times, its
          EndpointSlice conditions, and what would change its traffic. Reads only; uses
          the current kube context.

            -n, --namespace NAMESPACE   the Pod's namespace
                                        (default: the context's, else default)
          """
        : """
          usage: vigil top [-n NAMESPACE | -A]
                 (as a kubectl plugin: kubectl vigil top)

          BackendPools sorted by their unavailable share, worst first: available/total,
          backends Down, Ejected, Damped, Draining (Maint included) and Unknown, panic,
          and the ejections the cap refused (counted from EjectionRefused Events). Reads
          only; uses the current kube context.

            -n, --namespace NAMESPACE   one namespace
                                        (default: the context's, else default)
            -A, --all-namespaces        every namespace
          """;
  }

  public int why(List<String> args) {
    Args a = Args.parse(args, false);
    if (a.error() != null || a.positional().size() != 1) {
      err.println("vigil why: " + (a.error() != null ? a.error() : "name one Pod"));
      err.print(usage("why"));
      return 2;
    }
    String name = a.positional().get(0);
    KubernetesClient client = clients.get();
    try (client) {
      String ns = a.namespace(client);
      Pod pod = client.pods().inNamespace(ns).withName(name).get();
      if (pod == null) {
        return whyTarget(client, ns, name);
      }
      List<WhyReport.PoolFacts> facts = poolsOf(client, ns, pod);
      out.print(WhyReport.render(pod, facts, Instant.now()));
      return 0;
    } catch (KubernetesClientException e) {
      return apiError("why", client, e);
    }
  }

  /**
   * No Pod of that name: the backends of pools with {@code spec.targets} named by it (an address, a
   * hostname: every address of it, or {@code hostname/address}), one report each.
   */
  private int whyTarget(KubernetesClient client, String ns, String name) {
    int found = 0;
    for (BackendPool pool : client.resources(BackendPool.class).inNamespace(ns).list().getItems()) {
      if (pool.getSpec() == null
          || pool.getSpec().getTargets() == null
          || pool.getStatus() == null
          || pool.getStatus().getBackends() == null) {
        continue;
      }
      for (var b : pool.getStatus().getBackends()) {
        String id = b.getPod();
        if (id.equals(name) || id.startsWith(name + "/") || name.equals(b.getAddress())) {
          out.print(
              WhyReport.renderTarget(
                  ns, id, b.getAddress(), facts(client, ns, pool), Instant.now()));
          found++;
        }
      }
    }
    if (found == 0) {
      err.println("vigil why: no pod and no target " + ns + "/" + name);
      return 1;
    }
    return 0;
  }

  /** What every pool whose selector matches the Pod shows: the pool, its policy, its slices. */
  private static List<WhyReport.PoolFacts> poolsOf(KubernetesClient client, String ns, Pod pod) {
    List<WhyReport.PoolFacts> facts = new ArrayList<>();
    for (BackendPool pool : client.resources(BackendPool.class).inNamespace(ns).list().getItems()) {
      if (!LabelSelectors.matches(pool.getSpec().getSelector(), pod.getMetadata().getLabels())) {
        continue;
      }
      facts.add(facts(client, ns, pool));
    }
    return facts;
  }

  /** A pool, its policy and its slices. */
  private static WhyReport.PoolFacts facts(KubernetesClient client, String ns, BackendPool pool) {
    {
      HealthPolicy policy =
          client
              .resources(HealthPolicy.class)
              .inNamespace(ns)
              .withName(pool.getSpec().getPolicyRef().getName())
              .get();
      List<EndpointSlice> slices =
          client
              .discovery()
              .v1()
              .endpointSlices()
              .inNamespace(ns)
              .withLabel("kubernetes.io/service-name", serviceName(pool))
              .list()
              .getItems();
      return new WhyReport.PoolFacts(pool, policy, slices);
    }
  }

  public int top(List<String> args) {
    Args a = Args.parse(args, true);
    if (a.error() != null || !a.positional().isEmpty()) {
      err.println("vigil top: " + (a.error() != null ? a.error() : "takes no arguments"));
      err.print(usage("top"));
      return 2;
    }
    KubernetesClient client = clients.get();
    try (client) {
      List<BackendPool> pools;
      List<Event> events;
      if (a.all()) {
        pools = client.resources(BackendPool.class).inAnyNamespace().list().getItems();
        events =
            client.v1().events().inAnyNamespace().withField("reason", REFUSED).list().getItems();
      } else {
        String ns = a.namespace(client);
        pools = client.resources(BackendPool.class).inNamespace(ns).list().getItems();
        events =
            client.v1().events().inNamespace(ns).withField("reason", REFUSED).list().getItems();
      }
      out.print(TopReport.render(pools, refusals(events)));
      return 0;
    } catch (KubernetesClientException e) {
      return apiError("top", client, e);
    }
  }

  /** Refused ejections per pool, from the (aggregated) EjectionRefused Events on BackendPools. */
  static Map<String, Integer> refusals(List<Event> events) {
    Map<String, Integer> refused = new HashMap<>();
    for (Event e : events) {
      var obj = e.getInvolvedObject();
      if (obj == null || !"BackendPool".equals(obj.getKind()) || !REFUSED.equals(e.getReason())) {
        continue;
      }
      int count = e.getCount() == null ? 1 : e.getCount();
      refused.merge(obj.getNamespace() + "/" + obj.getName(), count, Integer::sum);
    }
    return refused;
  }

  private static String serviceName(BackendPool pool) {
    var service = pool.getSpec().getService();
    return service == null || service.getName() == null
        ? pool.getMetadata().getName()
        : service.getName();
  }

  private int apiError(String command, KubernetesClient client, KubernetesClientException e) {
    return apiError(err, command, client, e);
  }

  /** The API server's answer, or that there was none, in one line on {@code err}; returns 1. */
  static int apiError(
      PrintStream err, String command, KubernetesClient client, KubernetesClientException e) {
    if (e.getCode() > 0) {
      err.println(
          "vigil "
              + command
              + ": the API server answered HTTP "
              + e.getCode()
              + ": "
              + e.getMessage());
      return 1;
    }
    Throwable cause = e;
    while (cause.getCause() != null) {
      cause = cause.getCause();
    }
    err.println(
        "vigil "
            + command
            + ": no answer from the API server "
            + client.getMasterUrl()
            + ": "
            + cause);
    return 1;
  }

  /**
   * The flags kubectl users type: {@code -n NS}, {@code -nNS}, {@code --namespace[=]NS}, {@code
   * -A}.
   */
  record Args(List<String> positional, String namespace, boolean all, String error) {
    static Args parse(List<String> args, boolean allowAll) {
      List<String> positional = new ArrayList<>();
      String ns = null;
      boolean all = false;
      for (int i = 0; i < args.size(); i++) {
        String arg = args.get(i);
        if (arg.equals("-n") || arg.equals("--namespace")) {
          if (i + 1 >= args.size()) {
            return new Args(positional, null, false, arg + " needs a namespace");
          }
          ns = args.get(++i);
        } else if (arg.startsWith("--namespace=")) {
          ns = arg.substring("--namespace=".length());
        } else if (arg.startsWith("-n") && arg.length() > 2 && !arg.startsWith("--")) {
          ns = arg.substring(2);
        } else if (allowAll && (arg.equals("-A") || arg.equals("--all-namespaces"))) {
          all = true;
        } else if (arg.startsWith("-")) {
          return new Args(positional, null, false, "unknown flag " + arg);
        } else {
          positional.add(arg);
        }
      }
      return new Args(positional, ns, all, null);
    }

    String namespace(KubernetesClient client) {
      if (namespace != null) {
        return namespace;
      }
      return client.getNamespace() == null ? "default" : client.getNamespace();
    }
  }
}
