package dev.vigil.reconcile;

import dev.vigil.api.v1alpha1.BackendPoolStatus;
import dev.vigil.api.v1alpha1.BackendStatus;
import dev.vigil.api.v1alpha1.EjectingBatch;
import dev.vigil.health.ActiveState;
import dev.vigil.health.DampingState;
import dev.vigil.runtime.BatchKey;
import dev.vigil.runtime.Confirmer;
import dev.vigil.runtime.RestoredBackend;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Rebuilds backend state from what a previous operator published (docs/design.md §2 rule 8), so a
 * restarted operator continues where the last one stopped and writes nothing until something really
 * changes. Status gives state, ejections and ejection ends for the listed backends, and their
 * flap-damping merit and whether they were damped (so a restart never releases a damped backend
 * early), and the reporters' keyed batches that ejected them (so a retry of one is not applied
 * again: docs/passive.md, "Sending a batch again"); the slices' conditions cover the rest (the
 * status list is capped, unavailable backends first).
 */
public final class RestoreFromStatus {
  private RestoreFromStatus() {}

  /** Restored state by backend id (Pod name). */
  public static Map<String, RestoredBackend> restore(
      BackendPoolStatus status, List<EndpointSlice> slices, long nowMs) {
    Map<String, RestoredBackend> out = fromSlices(slices);
    if (status == null || status.getBackends() == null) {
      return out;
    }
    for (BackendStatus b : status.getBackends()) {
      if (b.getPod() != null && b.getState() != null) {
        out.put(b.getPod(), fromStatus(b, out.get(b.getPod()), nowMs));
      }
    }
    return out;
  }

  /** Up or Down by each endpoint's condition: serving while terminating, else ready. */
  private static Map<String, RestoredBackend> fromSlices(List<EndpointSlice> slices) {
    Map<String, RestoredBackend> out = new HashMap<>();
    for (EndpointSlice slice : slices) {
      if (slice.getEndpoints() == null) {
        continue;
      }
      for (Endpoint e : slice.getEndpoints()) {
        if (e.getConditions() == null
            || (e.getTargetRef() == null
                && (e.getAddresses() == null || e.getAddresses().isEmpty()))) {
          continue;
        }
        boolean terminating = Boolean.TRUE.equals(e.getConditions().getTerminating());
        boolean healthy =
            terminating
                ? Boolean.TRUE.equals(e.getConditions().getServing())
                : Boolean.TRUE.equals(e.getConditions().getReady());
        // a Pod by its name; a target (no targetRef) by its address (TrackedBackends looks both up)
        out.put(
            e.getTargetRef() != null ? e.getTargetRef().getName() : e.getAddresses().get(0),
            new RestoredBackend(healthy ? ActiveState.UP : ActiveState.DOWN, 0, 0));
      }
    }
    return out;
  }

  /** One backend as its status row shows it; {@code fromSlice} decides a draining one. */
  private static RestoredBackend fromStatus(
      BackendStatus b, RestoredBackend fromSlice, long nowMs) {
    int ejections = b.getEjections() == null ? 0 : b.getEjections();
    long until =
        b.getEjectedUntil() == null ? 0 : Instant.parse(b.getEjectedUntil()).toEpochMilli();
    ActiveState state =
        switch (b.getState()) {
          case UP -> ActiveState.UP;
          case DOWN -> ActiveState.DOWN;
          case UNKNOWN -> ActiveState.UNKNOWN;
          // Status shows Down before Ejected and Damped, so either was Up.
          case EJECTED, DAMPED -> ActiveState.UP;
          // A draining backend's health is the slice's serving condition.
          case DRAINING -> fromSlice == null ? ActiveState.UP : fromSlice.state();
          // A backend in maint is in no slice: its next probe decides.
          case MAINT -> fromSlice == null ? ActiveState.UNKNOWN : fromSlice.state();
        };
    if (until <= nowMs) {
      until = 0;
    }
    // the time of the last change too, so the next owner's status says what this one said
    long since = b.getSince() == null ? 0 : Instant.parse(b.getSince()).toEpochMilli();
    return new RestoredBackend(state, ejections, until, damping(b), since, votes(b), ejectedBy(b));
  }

  /** The keyed batches that ejected the backend lately (docs/passive.md). */
  private static List<BatchKey> ejectedBy(BackendStatus b) {
    if (b.getEjectedBy() == null) {
      return List.of();
    }
    List<BatchKey> keys = new ArrayList<>(b.getEjectedBy().size());
    for (EjectingBatch e : b.getEjectedBy()) {
      if (e != null && e.getKey() != null && e.getAt() != null) {
        keys.add(new BatchKey(e.getKey(), Instant.parse(e.getAt()).toEpochMilli()));
      }
    }
    return keys;
  }

  /** The voters' answers on the backend's last Down verdict, or null when status shows none. */
  private static Confirmer.Votes votes(BackendStatus b) {
    if (b.getConfirmedBy() == null && b.getRefutedBy() == null && b.getAbstained() == null) {
      return null;
    }
    return new Confirmer.Votes(
        listed(b.getConfirmedBy()), listed(b.getRefutedBy()), listed(b.getAbstained()));
  }

  private static List<String> listed(List<String> zones) {
    return zones == null ? List.of() : zones;
  }

  private static DampingState damping(BackendStatus b) {
    if (b.getMerit() == null || b.getMeritTime() == null || !(b.getMerit() >= 0)) {
      return DampingState.NONE;
    }
    if (Double.isInfinite(b.getMerit())) {
      return DampingState.NONE;
    }
    return new DampingState(
        b.getMerit(), Instant.parse(b.getMeritTime()).toEpochMilli(), b.getDampedUntil() != null);
  }
}
