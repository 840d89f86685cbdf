package dev.vigil.runtime;

import dev.vigil.health.BackendView;
import java.util.List;

/**
 * One backend for status and slice writers: the Pod, the decision, and what was last seen.
 *
 * @param published listed as ready in the EndpointSlice (available, or decided in panic)
 * @param healthy the health verdict alone: Up and not ejected
 * @param since when the backend's state last changed (epoch ms)
 * @param lastProbe null until the first probe completes
 * @param wouldEject a dry-run rule would have ejected it (reason), or null
 * @param votes what the voters answered on its last Down verdict out to them (docs/design.md §8),
 *     or null when none ever went out
 * @param ejectedBy the reporters' keyed batches that ejected it within the last two minutes
 *     (docs/passive.md, "Sending a batch again"), oldest first
 */
public record BackendSnapshot(
    Member member,
    BackendView decision,
    boolean published,
    boolean healthy,
    long since,
    ProbeSummary lastProbe,
    String wouldEject,
    Confirmer.Votes votes,
    List<BatchKey> ejectedBy) {}
