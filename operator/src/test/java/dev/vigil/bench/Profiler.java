package dev.vigil.bench;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import one.profiler.AsyncProfiler;

/**
 * CPU flame graphs of a load run's windows (async-profiler from Maven Central, its native library
 * unpacked from the jar). Samples with {@code itimer}, which needs no perf_events permission. Off
 * unless a directory is given.
 */
final class Profiler {
  private final AsyncProfiler profiler;
  private final Path dir;

  private Profiler(AsyncProfiler profiler, Path dir) {
    this.profiler = profiler;
    this.dir = dir;
  }

  /** A profiler writing into {@code dir}, or one that does nothing when {@code dir} is null. */
  static Profiler into(String dir) throws IOException {
    if (dir == null) {
      return new Profiler(null, null);
    }
    Path lib = Files.createTempFile("libasyncProfiler", ".so");
    try (InputStream in =
        AsyncProfiler.class.getResourceAsStream("/linux-x64/libasyncProfiler.so")) {
      if (in == null) {
        throw new IOException("libasyncProfiler.so for linux-x64 is not in the jar");
      }
      Files.copy(in, lib, StandardCopyOption.REPLACE_EXISTING);
    }
    Files.createDirectories(Path.of(dir));
    return new Profiler(AsyncProfiler.getInstance(lib.toString()), Path.of(dir));
  }

  void start() throws IOException {
    if (profiler != null) {
      profiler.execute("start,event=itimer,interval=1ms");
    }
  }

  /** Stops sampling and writes {@code <name>.html} (a flame graph) and {@code <name>.txt}. */
  void stop(String name) throws IOException {
    if (profiler != null) {
      profiler.execute("stop");
      profiler.execute("flamegraph,file=" + dir.resolve(name + ".html"));
      Files.writeString(dir.resolve(name + ".txt"), profiler.execute("flat=40,traces=0"));
    }
  }
}
