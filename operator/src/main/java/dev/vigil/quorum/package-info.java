/**
 * Checker quorum between replicas (docs/design.md §8): the owner of a pool asks voters in other
 * zones to confirm a Down ({@link dev.vigil.quorum.PeerConfirmer}), each voter probes the backends
 * itself and answers ({@link dev.vigil.quorum.VoterEndpoint}). The request runs pod to pod on the
 * outcome port's TLS, authenticated with Vigil's own ServiceAccount token ({@link dev.vigil.peer});
 * no API write.
 */
package dev.vigil.quorum;
