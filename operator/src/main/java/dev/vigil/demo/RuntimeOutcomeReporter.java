package dev.vigil.demo;

import dev.vigil.health.Origin;
import dev.vigil.runtime.PoolKey;
import dev.vigil.runtime.PoolRuntimes;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Hands outcomes straight to the pool's runtime, the call the intake makes after authenticating a
 * report. Used only while the operator has no intake to post to.
 */
public final class RuntimeOutcomeReporter implements OutcomeReporter {
  private final PoolRuntimes runtimes;

  public RuntimeOutcomeReporter(PoolRuntimes runtimes) {
    this.runtimes = runtimes;
  }

  @Override
  public int report(List<Outcome> batch) throws Exception {
    int accepted = 0;
    for (Outcome o : batch) {
      var runtime = runtimes.get(new PoolKey(o.namespace(), o.pool()));
      if (runtime.isEmpty()) {
        continue;
      }
      String ip = o.backend().substring(0, o.backend().lastIndexOf(':'));
      Origin origin = "local".equals(o.origin()) ? Origin.LOCAL : Origin.UPSTREAM;
      if (runtime
              .get()
              .onOutcome(ip, o.ok(), origin)
              .toCompletionStage()
              .toCompletableFuture()
              .get(5, TimeUnit.SECONDS)
          != null) {
        accepted++;
      }
    }
    return accepted;
  }

  @Override
  public String describe() {
    return "straight into the pool's runtime (this build has no outcome intake)";
  }
}
