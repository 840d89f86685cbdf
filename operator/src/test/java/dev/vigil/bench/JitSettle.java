package dev.vigil.bench;

import dev.vigil.testing.ProcStat;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.DoubleSupplier;

/**
 * Waits until this JVM's JIT compilers are quiet before a steady window is measured: the same rule
 * as {@code bench/harness/bench_checker.py --settle-jit-s}, from inside. HotSpot compiles a
 * prober's hot paths during its first tens of seconds (at 1,000 probes/s about 2 CPU s in the first
 * 20 s, then next to nothing); a window that starts 10 s after start-up measures the compiler as
 * much as the prober. Linux only: it reads the C1/C2 compiler threads' CPU from {@code
 * /proc/self/task} (or {@code /proc/PID/task} for other JVMs: {@link #awaitProcesses}); elsewhere
 * it reads 0 and returns after 5 s.
 */
public final class JitSettle {
  /** Quiet: at most this much compiler CPU over {@link #QUIET_NANOS}, 1 % of a core. */
  static final double QUIET_CPU_S = 0.05;

  static final long QUIET_NANOS = 5_000_000_000L;
  private static final long CLOCK_TICKS_PER_S = ProcStat.TICKS_PER_SECOND;

  private JitSettle() {}

  /**
   * {@link #await(double)} for a bench's {@code --settle-jit-s}: nothing when {@code maxSeconds} is
   * 0 or less, else waits and tells {@code log} how it ended. Returns what {@code await} returned,
   * or 0.
   */
  public static double await(double maxSeconds, Consumer<String> log) throws InterruptedException {
    if (maxSeconds <= 0) {
      return 0;
    }
    double waited = await(maxSeconds);
    log.accept(
        String.format(
            "JIT compilers %s after %.0f s more",
            waited > 0 ? "quiet" : "still busy", Math.abs(waited)));
    return waited;
  }

  /**
   * Blocks until the compiler threads used at most {@link #QUIET_CPU_S} over the last 5 s, or
   * {@code maxSeconds} passed. Returns the seconds waited; negative when it gave up.
   */
  public static double await(double maxSeconds) throws InterruptedException {
    return await(maxSeconds, List.of(JitSettle::compilerCpuSeconds));
  }

  /**
   * {@link #await(double)} for other JVMs (a bench's replicas, by PID): returns once every one of
   * them is quiet by the same rule, or {@code maxSeconds} passed (then negative).
   */
  public static double awaitProcesses(Collection<Long> pids, double maxSeconds)
      throws InterruptedException {
    List<DoubleSupplier> compilers = new ArrayList<>();
    for (long pid : pids) {
      compilers.add(() -> compilerCpuSeconds(pid));
    }
    return await(maxSeconds, compilers);
  }

  private static double await(double maxSeconds, List<DoubleSupplier> compilers)
      throws InterruptedException {
    long t0 = System.nanoTime();
    List<double[]> marks = new ArrayList<>(); // {nanoTime, compiler CPU s of each process}
    marks.add(mark(t0, compilers));
    while (true) {
      long now = System.nanoTime();
      double[] last = marks.get(marks.size() - 1);
      double[] quietFrom = null;
      for (double[] m : marks) {
        if (now - m[0] >= QUIET_NANOS) {
          quietFrom = m;
        }
      }
      double waited = (now - t0) / 1e9;
      if (quietFrom != null && quiet(quietFrom, last)) {
        return waited;
      }
      if (waited >= maxSeconds) {
        return -waited;
      }
      Thread.sleep(1000);
      marks.add(mark(System.nanoTime(), compilers));
    }
  }

  private static double[] mark(long nanos, List<DoubleSupplier> compilers) {
    double[] m = new double[compilers.size() + 1];
    m[0] = nanos;
    for (int i = 0; i < compilers.size(); i++) {
      m[i + 1] = compilers.get(i).getAsDouble();
    }
    return m;
  }

  private static boolean quiet(double[] from, double[] to) {
    for (int i = 1; i < from.length; i++) {
      if (to[i] - from[i] > QUIET_CPU_S) {
        return false;
      }
    }
    return true;
  }

  /** CPU seconds (user + system) of this JVM's C1 and C2 compiler threads so far. */
  public static double compilerCpuSeconds() {
    return compilerCpuSeconds(Path.of("/proc/self/task"));
  }

  /** The same for another JVM, by PID; 0 where /proc cannot be read (or the process ended). */
  public static double compilerCpuSeconds(long pid) {
    return compilerCpuSeconds(Path.of("/proc/" + pid + "/task"));
  }

  private static double compilerCpuSeconds(Path taskDir) {
    long ticks = 0;
    try (DirectoryStream<Path> tasks = Files.newDirectoryStream(taskDir)) {
      for (Path task : tasks) {
        ticks += compilerTicks(task);
      }
    } catch (IOException | RuntimeException e) {
      return 0;
    }
    return ticks / (double) CLOCK_TICKS_PER_S;
  }

  private static long compilerTicks(Path task) {
    ProcStat stat;
    try {
      stat = ProcStat.read(task.resolve("stat"));
    } catch (IOException e) {
      return 0; // the thread ended
    }
    String name = stat.name();
    if (!name.startsWith("C1 CompilerThre") && !name.startsWith("C2 CompilerThre")) {
      return 0;
    }
    return stat.cpuTicks();
  }
}
