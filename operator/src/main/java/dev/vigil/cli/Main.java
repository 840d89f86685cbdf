package dev.vigil.cli;

import dev.vigil.OperatorCommand;
import dev.vigil.demo.DemoCommand;
import dev.vigil.inspect.AdminStateCommand;
import dev.vigil.inspect.InspectCommand;
import dev.vigil.replay.ReplayCommand;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * {@code vigil}'s entry point: dispatches to the subcommand and exits with its code. It depends on
 * every command; none depends on it (the demo starts the operator through {@code dev.vigil.Vigil},
 * never the reverse).
 */
public final class Main {
  private Main() {}

  public static void main(String[] args) throws Exception {
    int code = VigilCommand.run(List.of(args), System.out, System.err, Main::command);
    System.exit(code);
  }

  private static VigilCommand.Subcommand command(String name) {
    return switch (name) {
      case "operator" -> args -> OperatorCommand.run(args, System.getenv());
      case "demo" -> args -> DemoCommand.run(args, System.out, System.err);
      case "replay" ->
          args ->
              ReplayCommand.run(
                  args,
                  new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)),
                  System.out,
                  System.err);
      case "why" -> args -> InspectCommand.standard().why(args);
      case "top" -> args -> InspectCommand.standard().top(args);
      case "drain", "maint", "ready" -> args -> AdminStateCommand.standard().run(name, args);
      default -> throw new IllegalArgumentException("no command " + name);
    };
  }
}
