package dev.vigil.cli;

import dev.vigil.OperatorCommand;
import dev.vigil.demo.DemoCommand;
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
    int code =
        VigilCommand.run(
            List.of(args),
            System.out,
            System.err,
            new VigilCommand.Subcommands() {
              @Override
              public int operator(List<String> rest) throws InterruptedException {
                return OperatorCommand.run(rest, System.getenv());
              }

              @Override
              public int demo(List<String> rest) {
                return DemoCommand.run(rest, System.out, System.err);
              }

              @Override
              public int replay(List<String> rest) throws java.io.IOException {
                return ReplayCommand.run(
                    rest,
                    new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)),
                    System.out,
                    System.err);
              }

              @Override
              public int why(List<String> rest) {
                return InspectCommand.standard().why(rest);
              }

              @Override
              public int top(List<String> rest) {
                return InspectCommand.standard().top(rest);
              }
            });
    System.exit(code);
  }
}
