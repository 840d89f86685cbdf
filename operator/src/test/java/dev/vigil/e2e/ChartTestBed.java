package dev.vigil.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * One E2E test's corner of the installed chart: a fresh namespace, the test hosts on {@code port},
 * a capture of the operator log, the slices of the Service "web" there, and every operator the test
 * starts ({@link #started}). A test class holds it as {@code @AutoClose private final ChartTestBed
 * bed = ChartTestBed.open(cluster, "prefix", PORT);} after installing the chart in its
 * {@code @BeforeAll}. {@link #close()} (once) stops the operators, then the hosts, detaches the
 * log, and fails on any request the chart's RBAC refused, unless the test said it expects some.
 */
final class ChartTestBed implements AutoCloseable {
  private final E2eCluster cluster;
  private final int port;
  private final String ns;
  private TestHosts hosts;
  private final OperatorLog log;
  private final PublishedSlices slices;
  private final List<RunningOperator> operators = new CopyOnWriteArrayList<>();
  private boolean expectForbidden;
  private boolean closed;

  private ChartTestBed(E2eCluster cluster, String prefix, int port) {
    this.cluster = cluster;
    this.port = port;
    ns = cluster.freshNamespace(prefix);
    log = OperatorLog.attach();
    slices = new PublishedSlices(cluster.admin(), ns, "web");
  }

  static ChartTestBed open(E2eCluster cluster, String prefix, int port) {
    return new ChartTestBed(cluster, prefix, port);
  }

  String ns() {
    return ns;
  }

  /** The test hosts, made at the first ask (a test without backends has none). */
  synchronized TestHosts hosts() {
    if (hosts == null) {
      hosts = new TestHosts(cluster, port);
    }
    return hosts;
  }

  OperatorLog log() {
    return log;
  }

  PublishedSlices slices() {
    return slices;
  }

  /** {@code operator}, now stopped at {@link #close()}. */
  <T extends RunningOperator> T started(T operator) {
    operators.add(operator);
    return operator;
  }

  /** The refused requests the log and every started operator report. */
  List<String> forbidden() {
    List<String> lines = new ArrayList<>(log.forbidden());
    operators.forEach(o -> lines.addAll(o.forbidden()));
    return lines;
  }

  /** The test provokes refusals: {@link #close()} does not fail on them. */
  void expectForbidden() {
    expectForbidden = true;
  }

  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    try {
      operators.forEach(RunningOperator::close);
      if (hosts != null) {
        hosts.close();
      }
    } finally {
      log.detach();
    }
    if (!expectForbidden) {
      assertThat(forbidden()).as("requests the chart's RBAC refused").isEmpty();
    }
  }
}
