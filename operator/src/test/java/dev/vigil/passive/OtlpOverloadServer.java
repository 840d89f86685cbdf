package dev.vigil.passive;

import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufAllocatorMetric;
import io.netty.buffer.ByteBufAllocatorMetricProvider;
import io.vertx.core.Vertx;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.util.ArrayList;
import java.util.List;
import javax.management.ObjectName;

/**
 * The server half of the OTLP overload run (bench/otlp-load.sh, issue 33): the real intake with the
 * OTLP receiver in a JVM of its own (the script starts it with the chart's heap and flags), the
 * default {@link IntakeLimits}, Vert.x with its default event loops as the operator runs it. Prints
 * {@code READY port=P ca=FILE} for the client ({@link OtlpOverloadClient}, another JVM), then every
 * {@code sampleS} seconds one {@code SAMPLE} line: the live heap (used right after a full
 * collection), and the direct and heap memory of Netty's allocators and of the JDK's direct
 * buffers. At the largest live heap after the first {@code warmS} seconds it takes a class
 * histogram (which is what held the heap at its peak); after {@code seconds} it prints the series'
 * summary ({@code SERIES}: the largest live heap and direct memory per third of the run) and exits:
 * bounded in time.
 *
 * <p>Arguments: backends, seconds, sample seconds, warm-up seconds (no histogram before).
 */
public final class OtlpOverloadServer {
  private static final int HISTOGRAM_LINES = 25;

  private OtlpOverloadServer() {}

  /** One sample, MiB. */
  record Sample(
      long atS, double liveHeap, double nettyHeap, double nettyDirect, double jdkDirect) {}

  public static void main(String[] args) throws Exception {
    int backends = args.length > 0 ? Integer.parseInt(args[0]) : 100;
    int seconds = args.length > 1 ? Integer.parseInt(args[1]) : 180;
    int sampleS = args.length > 2 ? Integer.parseInt(args[2]) : 5;
    int warmS = args.length > 3 ? Integer.parseInt(args[3]) : 30;
    Vertx server = Vertx.vertx();
    IntakeHarness harness = OtlpIntakeLoad.harness(server, backends, IntakeLimits.defaults());
    System.out.printf(
        "READY port=%d ca=%s cores=%d maxHeap=%dMiB%n",
        harness.port,
        dev.vigil.testing.TestTls.caFile(),
        Runtime.getRuntime().availableProcessors(),
        Runtime.getRuntime().maxMemory() >> 20);
    System.out.flush();
    List<Sample> series = new ArrayList<>();
    double peak = 0;
    String histogram = "";
    long t0 = System.nanoTime();
    for (long at = sampleS; at <= seconds; at += sampleS) {
      long wait = t0 + at * 1_000_000_000L - System.nanoTime();
      if (wait > 0) {
        Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
      }
      Sample s = sample(at);
      series.add(s);
      System.out.printf(
          "SAMPLE t=%ds liveHeap=%.1fMiB nettyHeap=%.1fMiB nettyDirect=%.1fMiB jdkDirect=%.1fMiB%n",
          s.atS(), s.liveHeap(), s.nettyHeap(), s.nettyDirect(), s.jdkDirect());
      System.out.flush();
      if (at >= warmS && s.liveHeap() > peak) {
        peak = s.liveHeap();
        histogram = "at t=" + at + "s\n" + histogram();
      }
    }
    System.out.println(summary(series));
    System.out.println("HISTOGRAM at the largest live heap after " + warmS + "s, " + histogram);
    System.out.flush();
    harness.close();
    IntakeHarness.await(server.close());
    System.exit(0);
  }

  /** The live heap after a full collection, and the allocators' memory, in MiB. */
  static Sample sample(long atS) {
    System.gc();
    MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
    double live = memory.getHeapMemoryUsage().getUsed() / 1048576.0;
    double nettyHeap = 0;
    double nettyDirect = 0;
    List<ByteBufAllocator> allocators = new ArrayList<>();
    allocators.add(ByteBufAllocator.DEFAULT);
    if (io.vertx.core.impl.buffer.VertxByteBufAllocator.POOLED_ALLOCATOR
        != ByteBufAllocator.DEFAULT) {
      allocators.add(io.vertx.core.impl.buffer.VertxByteBufAllocator.POOLED_ALLOCATOR);
    }
    for (ByteBufAllocator a : allocators) {
      if (a instanceof ByteBufAllocatorMetricProvider p) {
        ByteBufAllocatorMetric m = p.metric();
        nettyHeap += m.usedHeapMemory() / 1048576.0;
        nettyDirect += m.usedDirectMemory() / 1048576.0;
      }
    }
    double jdkDirect = 0;
    for (BufferPoolMXBean pool : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
      if ("direct".equals(pool.getName())) {
        jdkDirect = pool.getMemoryUsed() / 1048576.0;
      }
    }
    return new Sample(atS, live, nettyHeap, nettyDirect, jdkDirect);
  }

  /**
   * The largest live heap and Netty direct memory in each third of the series: a bound shows as a
   * last third no larger than the second.
   */
  static String summary(List<Sample> series) {
    int n = series.size();
    StringBuilder heap = new StringBuilder();
    StringBuilder netty = new StringBuilder();
    StringBuilder jdk = new StringBuilder();
    for (int third = 0; third < 3; third++) {
      double h = 0;
      double d = 0;
      double j = 0;
      for (int i = third * n / 3; i < (third + 1) * n / 3; i++) {
        h = Math.max(h, series.get(i).liveHeap());
        d = Math.max(d, series.get(i).nettyDirect());
        j = Math.max(j, series.get(i).jdkDirect());
      }
      String sep = third == 0 ? "" : ",";
      heap.append(sep).append(String.format("%.1f", h));
      netty.append(sep).append(String.format("%.1f", d));
      jdk.append(sep).append(String.format("%.1f", j));
    }
    return String.format(
        "SERIES samples=%d liveHeapMaxByThird=%sMiB nettyDirectMaxByThird=%sMiB"
            + " jdkDirectMaxByThird=%sMiB",
        n, heap, netty, jdk);
  }

  private static String histogram() {
    try {
      Object out =
          ManagementFactory.getPlatformMBeanServer()
              .invoke(
                  new ObjectName("com.sun.management:type=DiagnosticCommand"),
                  "gcClassHistogram",
                  new Object[] {new String[0]},
                  new String[] {String[].class.getName()});
      String[] lines = out.toString().split("\n");
      StringBuilder top = new StringBuilder();
      for (int i = 0; i < Math.min(lines.length, HISTOGRAM_LINES + 3); i++) {
        top.append(lines[i]).append('\n');
      }
      top.append(lines[lines.length - 1]).append('\n');
      return top.toString();
    } catch (Exception e) {
      return "no histogram: " + e + "\n";
    }
  }
}
