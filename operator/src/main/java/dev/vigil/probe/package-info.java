/**
 * Active checks: a {@link dev.vigil.probe.ProbeScheduler} starts each backend's probes on planned
 * times, a {@link dev.vigil.probe.Prober} per protocol ({@link dev.vigil.probe.ProtocolProber}
 * picks: {@code http.HttpProber}, {@code http.Http2Prober}, {@link dev.vigil.probe.TcpProber},
 * {@link dev.vigil.probe.GrpcProber}) turns one check of one backend into a {@link
 * dev.vigil.probe.ProbeResult} (pass or fail and a short reason) and nothing else. What a check
 * asks for is a resolved {@link dev.vigil.probe.CheckSpec}.
 *
 * <p>Subpackages: {@code http} (HTTP/1.1, HTTP/2 and WebSocket checks and their parsers) and {@code
 * transport} (the sockets under them, behind {@code ProbeConnection}). Threads: a probe and its
 * callbacks run on the Vert.x context that started it; the scheduler runs on its own context
 * through the {@link dev.vigil.probe.Timers} seam.
 */
package dev.vigil.probe;
