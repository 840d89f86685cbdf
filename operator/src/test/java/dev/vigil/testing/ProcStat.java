package dev.vigil.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * One line of {@code /proc/<pid>/stat} or {@code /proc/<pid>/task/<tid>/stat}: the name in
 * parentheses and the CPU time (fields 14 and 15, utime + stime, in clock ticks).
 */
public record ProcStat(String name, long cpuTicks) {
  /** USER_HZ on Linux. */
  public static final long TICKS_PER_SECOND = 100;

  public static ProcStat read(Path stat) throws IOException {
    String s = Files.readString(stat);
    int close = s.lastIndexOf(')'); // the name may hold spaces and parentheses
    String[] f = s.substring(close + 2).split(" ");
    return new ProcStat(
        s.substring(s.indexOf('(') + 1, close), Long.parseLong(f[11]) + Long.parseLong(f[12]));
  }

  /** A process's CPU time so far, seconds. */
  public static double cpuSeconds(long pid) throws IOException {
    return read(Path.of("/proc", Long.toString(pid), "stat")).cpuTicks()
        / (double) TICKS_PER_SECOND;
  }
}
