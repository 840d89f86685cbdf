/**
 * Calls between the replicas of one installation, pod to pod on the outcome port's TLS: the caller
 * sends its ServiceAccount token ({@link dev.vigil.peer.ServiceAccountToken}) only to a peer that
 * presents this installation's own serving certificate ({@link dev.vigil.peer.PeerClient}), and the
 * callee takes the call only from the very user it runs as ({@link dev.vigil.peer.PeerAuth}). Used
 * by checker quorum ({@code /v1/confirmations}) and by the outcomes forwarded to a pool's owner.
 */
package dev.vigil.peer;
