/**
 * Who may talk to Vigil's ports, and how much (docs/design.md §4): one {@link
 * dev.vigil.security.Reviewer} (TokenReview and SubjectAccessReview, {@link
 * dev.vigil.security.Fabric8Reviewer}) and one cache of its answers ({@link
 * dev.vigil.security.Reviews} over {@link dev.vigil.security.ReviewCache}) for the outcome intake
 * and the secured metrics port alike; per-key token buckets ({@link
 * dev.vigil.security.TokenBuckets}); connection bounds ({@link dev.vigil.security.ConnectionGate});
 * the certificates the ports serve ({@link dev.vigil.security.ServingCertificate}, {@link
 * dev.vigil.security.CertificateAuthority}) and the client certificates the outcome port takes as
 * callers ({@link dev.vigil.security.ClientCertificates}), both re-read from their files as they
 * rotate ({@link dev.vigil.security.WatchedFiles}).
 *
 * <p>Threads: a port's event loop asks; the blocking review calls run on that port's worker pool
 * ({@code vigil-reviews} for the intake, {@code vigil-metrics-reviews} for the metrics port) and
 * their answers come back as futures, which the port hands back to its event loop. Nothing here
 * blocks an event loop, and nothing here knows the ports that use it.
 */
package dev.vigil.security;
