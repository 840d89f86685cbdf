package dev.vigil.cli;

import dev.vigil.OperatorCommand;
import dev.vigil.OperatorConfig;
import dev.vigil.demo.DemoOptions;
import dev.vigil.inspect.AdminStateCommand;
import dev.vigil.inspect.InspectCommand;
import dev.vigil.replay.ReplayCommand;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Properties;
import java.util.function.Function;

/**
 * {@code vigil}'s command line: which subcommand runs, and the answers that need none of them
 * (help, a subcommand's help, the version). Nothing starts without a subcommand: {@code vigil}
 * alone prints the help and exits 2, so a curious first run never starts a second writer beside an
 * installed Vigil.
 */
public final class VigilCommand {
  /** Exit code of a usage error (no subcommand, an unknown one, a bad flag). */
  public static final int USAGE = OperatorCommand.USAGE;

  /** A subcommand: runs with the arguments after its name, returns its exit code. */
  @FunctionalInterface
  public interface Subcommand {
    int run(List<String> args) throws Exception;
  }

  public static final List<String> COMMANDS =
      List.of("operator", "demo", "replay", "why", "top", "drain", "maint", "ready");

  private VigilCommand() {}

  /**
   * Runs the command line; returns the exit code.
   *
   * @param commands each of {@link #COMMANDS} by name
   */
  public static int run(
      List<String> args, PrintStream out, PrintStream err, Function<String, Subcommand> commands)
      throws Exception {
    if (args.isEmpty()) {
      err.print(usage());
      return USAGE;
    }
    String command = args.get(0);
    List<String> rest = args.subList(1, args.size());
    switch (command) {
      case "help", "--help", "-h" -> {
        return help(rest, out, err);
      }
      case "version", "--version" -> {
        out.println("vigil " + version());
        return 0;
      }
      default -> {
        // handled below
      }
    }
    if (!COMMANDS.contains(command)) {
      err.println("vigil: unknown command '" + command + "'");
      err.print(usage());
      return USAGE;
    }
    if (rest.contains("--help") || rest.contains("-h")) {
      out.print(usage(command));
      return 0;
    }
    return commands.apply(command).run(rest);
  }

  /** {@code vigil help [COMMAND]}: the usage, or one command's. */
  private static int help(List<String> rest, PrintStream out, PrintStream err) {
    if (rest.isEmpty()) {
      out.print(usage());
    } else if (COMMANDS.contains(rest.get(0))) {
      out.print(usage(rest.get(0)));
    } else {
      err.println("vigil: unknown command '" + rest.get(0) + "'");
      err.print(usage());
      return USAGE;
    }
    return 0;
  }

  /** The text of {@code vigil --help}. */
  public static String usage() {
    return """
        usage: vigil <command> [flags]

        Commands:
          demo       Vigil's whole job with no cluster: an embedded API server, real
                     backends, a tour
          replay     read probe answers and request outcomes on stdin, print Vigil's
                     decisions
          operator   run the operator against the API server of the current kube
                     context (or, in a Pod, its ServiceAccount); leader election is on
                     unless --leader-election=false
          why        why a Pod gets traffic or not: every pool that selects it, its
                     verdict, its slice
          top        pools sorted by unavailable share, with panic and refused ejections
          drain      drain a Pod: published not ready (serving, terminating)
                     until 'ready'
          maint      put a Pod in maintenance: out of its EndpointSlice until 'ready'
          ready      lift a Pod's drain or maint (annotation vigil.dev/admin-state)
          help       this text; 'vigil help <command>' or 'vigil <command> --help'
                     for its flags
          version    the version (also --version)

        vigil alone starts nothing: name the command.
        """;
  }

  /** The help of one subcommand. */
  public static String usage(String command) {
    String text =
        switch (command) {
          case "operator" -> OperatorConfig.usage();
          case "demo" -> DemoOptions.usage();
          case "replay" -> ReplayCommand.usage();
          case "why", "top" -> InspectCommand.usage(command);
          case "drain", "maint", "ready" -> AdminStateCommand.usage(command);
          default -> throw new IllegalArgumentException("no command " + command);
        };
    return text.endsWith("\n") ? text : text + "\n";
  }

  /** The version the build filled in (operator/pom.xml filters {@code version.properties}). */
  public static String version() {
    try (InputStream in = VigilCommand.class.getResourceAsStream("/dev/vigil/version.properties")) {
      if (in == null) {
        return "unknown (no version.properties: not built by Maven)";
      }
      Properties p = new Properties();
      p.load(in);
      return p.getProperty("version", "unknown");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
