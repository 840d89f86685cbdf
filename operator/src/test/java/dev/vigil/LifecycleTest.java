package dev.vigil;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigil.Lifecycle.Stage;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class LifecycleTest {

  @Test
  void stopsStageByStageInRegistrationOrderWithinAStageAndLeasesLast() {
    List<String> ran = new ArrayList<>();
    Lifecycle lifecycle = new Lifecycle();
    // registered in the order the wiring opens things, which is not the order they stop in
    lifecycle.on(Stage.WRITES, "events", () -> ran.add("events"));
    lifecycle.on(Stage.PROBES, "probes", () -> ran.add("probes"));
    lifecycle.on(Stage.LEASES, "shard Lease", () -> ran.add("shard Lease"));
    lifecycle.on(Stage.INPUT, "election told", () -> ran.add("election told"));
    lifecycle.on(Stage.LEASES, "leader Lease", () -> ran.add("leader Lease"));
    lifecycle.on(Stage.SERVING, "ops", () -> ran.add("ops"));
    lifecycle.on(Stage.FLUSH, "status", () -> ran.add("status"));
    lifecycle.on(Stage.RECONCILE, "operator", () -> ran.add("operator"));
    lifecycle.on(Stage.INPUT, "intake", () -> ran.add("intake"));

    lifecycle.stop();

    assertThat(ran)
        .containsExactly(
            "election told",
            "intake",
            "status",
            "operator",
            "events",
            "ops",
            "probes",
            "shard Lease",
            "leader Lease");
  }

  @Test
  void aFailingStepIsLoggedAndTheRestStillRunOnce() {
    List<String> ran = new ArrayList<>();
    Lifecycle lifecycle = new Lifecycle();
    lifecycle.on(
        Stage.RECONCILE,
        "operator",
        () -> {
          throw new IllegalStateException("informers stuck");
        });
    lifecycle.on(Stage.LEASES, "leader Lease", () -> ran.add("leader Lease"));

    lifecycle.stop();
    lifecycle.stop();

    assertThat(ran).as("released despite the failure, and once").containsExactly("leader Lease");
  }
}
