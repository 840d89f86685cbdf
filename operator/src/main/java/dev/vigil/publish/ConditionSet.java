package dev.vigil.publish;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import java.util.ArrayList;
import java.util.List;

/**
 * Builds a status' conditions, keeping each condition's {@code lastTransitionTime} when its status
 * did not change (so an unchanged condition never makes a status different).
 */
final class ConditionSet {
  private final List<Condition> previous;
  private final String now;
  private final Long generation;
  private final List<Condition> out = new ArrayList<>();

  ConditionSet(List<Condition> previous, String now, Long generation) {
    this.previous = previous == null ? List.of() : previous;
    this.now = now;
    this.generation = generation;
  }

  ConditionSet set(String type, boolean status, String reason, String message) {
    String s = status ? "True" : "False";
    String since = now;
    for (Condition c : previous) {
      if (type.equals(c.getType())
          && s.equals(c.getStatus())
          && c.getLastTransitionTime() != null) {
        since = c.getLastTransitionTime();
      }
    }
    out.add(
        new ConditionBuilder()
            .withType(type)
            .withStatus(s)
            .withReason(reason)
            .withMessage(message)
            .withObservedGeneration(generation)
            .withLastTransitionTime(since)
            .build());
    return this;
  }

  List<Condition> build() {
    return List.copyOf(out);
  }
}
