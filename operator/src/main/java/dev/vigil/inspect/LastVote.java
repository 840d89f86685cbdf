package dev.vigil.inspect;

import dev.vigil.api.v1alpha1.BackendStatus;
import dev.vigil.health.Confirmation;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * What {@code vigil why} says of the voters' answers on a backend's last Down verdict put to the
 * vote (docs/design.md §8): who confirmed it, who said Up, who abstained, and the outcome by the
 * vote rule at the policy's {@code quorum.downPercent}. Pure.
 */
final class LastVote {
  private LastVote() {}

  /** The line, or empty when no Down verdict of the backend ever went to the voters. */
  static Optional<String> describe(BackendStatus b, int downPercent) {
    if (b.getConfirmedBy() == null && b.getRefutedBy() == null && b.getAbstained() == null) {
      return Optional.empty();
    }
    List<String> down = listed(b.getConfirmedBy());
    List<String> up = listed(b.getRefutedBy());
    List<String> abstained = listed(b.getAbstained());
    if (down.isEmpty() && up.isEmpty()) {
      return Optional.of(
          "last Down went to the voters and none answered"
              + (abstained.isEmpty() ? "" : " (" + join(abstained) + " abstained)")
              + ": this checker decided alone");
    }
    // the owner counts as a down vote among the deciding voters
    boolean confirmed =
        Confirmation.vote(Math.max(0, Math.min(99, downPercent)))
            .down(1 + down.size(), 1 + down.size() + up.size());
    List<String> others = new ArrayList<>();
    if (!confirmed && !down.isEmpty()) {
      others.add(join(down) + " said Down");
    }
    if (!up.isEmpty()) {
      others.add(join(up) + " said Up");
    }
    if (!abstained.isEmpty()) {
      others.add(join(abstained) + " abstained");
    }
    if (!confirmed) {
      return Optional.of("last Down not confirmed: " + String.join(", ", others));
    }
    String head =
        down.isEmpty()
            ? "last Down taken on this checker's own vote"
            : "last Down confirmed by " + join(down);
    return Optional.of(head + (others.isEmpty() ? "" : "; " + String.join(", ", others)));
  }

  private static List<String> listed(List<String> zones) {
    return zones == null ? List.of() : zones;
  }

  private static String join(List<String> zones) {
    return String.join(", ", zones);
  }
}
