package dev.vigil.shard;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

class CheckerGaugesTest {

  /**
   * The suppliers are method references nobody else holds, as {@code ShardingWiring} passes them:
   * held weakly (Micrometer's default), a garbage collection turned both gauges into NaN on every
   * replica (seen in QuorumE2E: {@code vigil_checker_suspect NaN} on a replica cut off from its
   * backends).
   */
  @Test
  void gaugesKeepTheirValuesAfterGarbageCollection() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    FailingShare share = new FailingShare(FailingShare.WINDOW, () -> 0L);
    share.sample(1, 2);
    AtomicBoolean suspect = new AtomicBoolean(true);
    CheckerGauges.register(registry, "vigil-0", share::share, suspect::get);
    for (int i = 0; i < 5; i++) {
      System.gc();
    }
    assertThat(registry.get(CheckerGauges.FAILING_SHARE).tag("shard", "vigil-0").gauge().value())
        .isEqualTo(0.5);
    assertThat(registry.get(CheckerGauges.SUSPECT).tag("shard", "vigil-0").gauge().value())
        .isEqualTo(1);
  }
}
