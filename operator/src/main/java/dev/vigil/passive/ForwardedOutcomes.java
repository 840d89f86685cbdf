package dev.vigil.passive;

import dev.vigil.health.EjectionDecision;
import dev.vigil.runtime.AppliedOutcomes;
import dev.vigil.runtime.OutcomeReport;
import dev.vigil.runtime.PoolKey;
import java.util.BitSet;
import java.util.List;

/**
 * The wire format of {@code POST /v1/forwarded-outcomes} between replicas (docs/passive.md,
 * "Routing between replicas"): one request carries parts, each one pool's outcomes under an id the
 * owner remembers, and the answer says per part whether the owner applied it.
 */
final class ForwardedOutcomes {
  private ForwardedOutcomes() {}

  /** The request: parts for pools the sender believes the callee owns. */
  record Request(String from, List<Part> parts) {
    Request {
      parts = parts == null ? List.of() : parts;
    }
  }

  /**
   * One pool's outcomes under an id that is the same on every try of them; {@code key} and {@code
   * fingerprint} are the reporter's {@link IdempotencyKey} when it sent one (else null): the owner
   * remembers the answer under the key, whichever replica forwarded it.
   */
  record Part(
      String id,
      String namespace,
      String name,
      List<OutcomeReport> outcomes,
      String key,
      String fingerprint) {
    Part {
      outcomes = outcomes == null ? List.of() : outcomes;
    }

    PoolKey pool() {
      return new PoolKey(namespace, name);
    }
  }

  /** The answer: one per part, in the request's order, and the callee's boot id. */
  record Answer(String boot, List<PartAnswer> parts) {
    Answer {
      parts = parts == null ? List.of() : parts;
    }
  }

  /**
   * Whether a part was applied ({@code applied}, with the indexes of its unknown backends and its
   * decisions) or not ({@code reason}: {@value #NOT_MINE} when the pool does not run on the callee,
   * so nothing of it was applied there; {@value #KEY_REUSED} when the reporter's idempotency key
   * came before with another body, so nothing of it was applied).
   */
  record PartAnswer(
      String id, boolean applied, String reason, List<Integer> unknown, List<Decision> decisions) {
    static final String NOT_MINE = "not_mine";
    static final String KEY_REUSED = "key_reused";

    PartAnswer {
      unknown = unknown == null ? List.of() : unknown;
      decisions = decisions == null ? List.of() : decisions;
    }

    static PartAnswer of(String id, AppliedOutcomes applied) {
      List<Integer> unknown = applied.unknown().stream().boxed().toList();
      List<Decision> decisions =
          applied.decisions().stream().map(d -> new Decision(d.backend(), d.decision())).toList();
      return new PartAnswer(id, true, null, unknown, decisions);
    }

    static PartAnswer notMine(String id) {
      return new PartAnswer(id, false, NOT_MINE, List.of(), List.of());
    }

    static PartAnswer keyReused(String id) {
      return new PartAnswer(id, false, KEY_REUSED, List.of(), List.of());
    }

    boolean keyWasReused() {
      return KEY_REUSED.equals(reason);
    }

    /**
     * This answer for the part {@code other} (a repeat under the same key has an id of its own).
     */
    PartAnswer withId(String other) {
      return new PartAnswer(other, applied, reason, unknown, decisions);
    }

    /** What the owner's runtime said the part did. */
    AppliedOutcomes outcomes() {
      BitSet bits = new BitSet();
      unknown.forEach(bits::set);
      return new AppliedOutcomes(
          bits,
          decisions.stream()
              .map(d -> new AppliedOutcomes.Decided(d.backend(), d.decision()))
              .toList());
    }
  }

  /** An outcome that decided something about its backend, as the owner's runtime said. */
  record Decision(String backend, EjectionDecision decision) {}
}
