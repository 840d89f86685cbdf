package dev.vigil.demo;

import java.util.List;

/**
 * The scripted scenarios: one per rule, and the tour through all of them. Each step changes real
 * backends, waits for what a consumer of the EndpointSlices would see, and records the measured
 * time next to the configured one; an expectation that does not hold ends the run.
 */
final class Scenarios {
  static final List<String> NAMES =
      List.of("tour", "down", "flap", "damping", "passive", "panic", "cap");

  private final ScenarioStage.Progress progress = new ScenarioStage.Progress();
  private final ActiveScenarios active;
  private final PassiveScenarios passive;

  /**
   * @param intruder posts to the intake with a token no TokenReview accepts
   */
  Scenarios(
      DemoCluster cluster,
      DemoTraffic traffic,
      OutcomeReporter intruder,
      Timeline timeline,
      Expectations expect) {
    ScenarioStage.Cast cast =
        new ScenarioStage.Cast(cluster, traffic, intruder, timeline, expect, progress);
    this.active = new ActiveScenarios(cast);
    this.passive = new PassiveScenarios(cast);
  }

  String step() {
    return progress.step;
  }

  void run(String name) {
    active.startup();
    switch (name) {
      case "down" -> active.down(0);
      case "flap" -> active.flap(1);
      case "passive" -> passive.passive(2);
      case "panic" -> passive.panic();
      case "cap" -> passive.cap();
      case "damping" -> active.damping(0);
      default -> {
        active.down(0);
        active.flap(1);
        passive.passive(2);
        passive.panic();
        passive.cap();
        active.damping(
            0); // last: its backend is no panic or cap victim, and its old merit has decayed
      }
    }
    progress.step = "done";
  }
}
