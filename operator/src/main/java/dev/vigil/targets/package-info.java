/**
 * Backends that are not Pods (issue 35, item 1): {@code BackendPool.spec.targets}. A target is a
 * static address or a DNS name; {@link TargetResolver} keeps each pool's names resolved (Netty's
 * DNS resolver on its own event loop, never an informer or reconciler thread), {@link ResolvedName}
 * holds the rules (TTL bounded to {@value ResolvedName#MIN_TTL_MS} ms ..{@value
 * ResolvedName#MAX_TTL_MS} ms, the last answer kept {@value ResolvedName#KEEP_LAST_MS} ms after a
 * name stops resolving), and {@link TargetMembers} turns the entries and answers into runtime
 * members.
 *
 * <p>Threads: a reconcile (a JOSDK worker) calls {@link TargetResolver#resolve}, which reads the
 * kept answers and starts the lookups that are due; each lookup completes on the resolver's event
 * loop, which records the answer and, when the addresses or the failing state changed, asks for a
 * reconcile of the pool (a JOSDK inbound event). The reconcile after that one reads the new answer.
 */
package dev.vigil.targets;
