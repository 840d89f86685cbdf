package dev.vigil.inspect;

import dev.vigil.health.AdminState;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.io.PrintStream;
import java.util.List;
import java.util.function.Supplier;

/**
 * {@code vigil drain|maint|ready POD [-n NS]} (as {@code kubectl vigil drain POD}): sets or lifts
 * an operator's admin state on a Pod, the annotation {@link AdminState#ANNOTATION}, with one JSON
 * merge patch under the user's own kube context (their RBAC: {@code patch} on {@code pods}). The
 * operator reads the annotation from its Pod cache; docs/decision.md says what each state does.
 * Unlike {@code why} and {@code top}, this command writes.
 */
public final class AdminStateCommand {
  public static final List<String> COMMANDS = List.of("drain", "maint", "ready");

  private final Supplier<KubernetesClient> clients;
  private final PrintStream out;
  private final PrintStream err;

  public AdminStateCommand(Console console) {
    this.clients = console.clients();
    this.out = console.out();
    this.err = console.err();
  }

  /** With {@link Console#standard()}. */
  public static AdminStateCommand standard() {
    return new AdminStateCommand(Console.standard());
  }

  public static String usage(String command) {
    String what =
        switch (command) {
          case "drain" ->
              "Drains the Pod: Vigil publishes it ready=false, serving=<health>,\n"
                  + "terminating=true, like a terminating Pod, so no new connections reach it.";
          case "maint" -> "Puts the Pod in maintenance: Vigil leaves it out of the EndpointSlice.";
          default ->
              "Lifts the Pod's admin state (drain or maint): its agent and probes decide.\n"
                  + "An entry in the pool's spec.adminStates is not lifted: edit the pool.";
        };
    return "usage: vigil "
        + command
        + " POD [-n NAMESPACE]\n"
        + "       (as a kubectl plugin: kubectl vigil "
        + command
        + " POD)\n\n"
        + what
        + "\nNeither drain nor maint counts toward panic or the ejection cap. Sets the\n"
        + "annotation "
        + AdminState.ANNOTATION
        + " with the current kube context\n(needs patch on pods).\n\n"
        + "  -n, --namespace NAMESPACE   the Pod's namespace\n"
        + "                              (default: the context's, else default)\n";
  }

  /** Runs {@code command} (one of {@link #COMMANDS}); returns the exit code. */
  public int run(String command, List<String> args) {
    InspectCommand.Args a = InspectCommand.Args.parse(args, false);
    if (a.error() != null || a.positional().size() != 1) {
      err.println("vigil " + command + ": " + (a.error() != null ? a.error() : "name one Pod"));
      err.print(usage(command));
      return 2;
    }
    AdminState state = AdminState.parse("command", command);
    String name = a.positional().get(0);
    KubernetesClient client = clients.get();
    try (client) {
      String ns = a.namespace(client);
      Pod pod = client.pods().inNamespace(ns).withName(name).get();
      if (pod == null) {
        err.println("vigil " + command + ": pod " + ns + "/" + name + " not found");
        return 1;
      }
      client
          .pods()
          .inNamespace(ns)
          .withName(name)
          .patch(PatchContext.of(PatchType.JSON_MERGE), patch(state));
      out.println(
          "pod "
              + ns
              + "/"
              + name
              + (state == AdminState.UP
                  ? ": admin state lifted (" + AdminState.ANNOTATION + " removed)"
                  : ": admin state " + state.word() + " (" + AdminState.ANNOTATION + ")"));
      return 0;
    } catch (KubernetesClientException e) {
      return InspectCommand.apiError(err, command, client, e);
    }
  }

  /** The merge patch: the annotation set to the state's word, or removed (null) for UP. */
  static String patch(AdminState state) {
    String value = state == AdminState.UP ? "null" : "\"" + state.word() + "\"";
    return "{\"metadata\":{\"annotations\":{\"" + AdminState.ANNOTATION + "\":" + value + "}}}";
  }
}
