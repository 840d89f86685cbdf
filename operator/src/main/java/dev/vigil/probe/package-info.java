/**
 * Active checks: a {@link dev.vigil.probe.ProbeScheduler} starts each backend's probes on planned
 * times, a {@link dev.vigil.probe.Prober} per protocol ({@link dev.vigil.probe.ProtocolProber}
 * picks: {@code http.HttpProber}, {@code http.Http2Prober}, {@code tcp.TcpProber}, {@code
 * grpc.GrpcProber}) turns one check of one backend into a {@link dev.vigil.probe.ProbeResult} (pass
 * or fail and a short reason) and nothing else. What a check asks for is a resolved {@link
 * dev.vigil.probe.CheckSpec}. A pool's probe loops are a {@link dev.vigil.probe.Probing} ({@link
 * dev.vigil.probe.ScheduledProbing}: one scheduler per lane, {@link dev.vigil.probe.ProbeLanes});
 * it hands each result to its {@code Results} and takes back the backend's new probe phase, so
 * {@code runtime} tells this package nothing on the way from a result to the slice.
 *
 * <p>Subpackages: {@code http} (HTTP/1.1, HTTP/2 and WebSocket checks and their parsers), {@code
 * tcp}, {@code grpc}, and {@code transport} (the sockets under them, behind {@code
 * ProbeConnection}). They depend on this package and never the reverse: the value types a check
 * carries ({@code CheckSpec}, {@code ExpectedStatuses}, {@code ProbeResult}) live here, and the
 * operator's wiring hands the protocol probers to {@code ProtocolProber}. Threads: a probe and its
 * callbacks run on the Vert.x context that started it; the scheduler runs on its own context
 * through the {@link dev.vigil.probe.Timers} seam.
 */
package dev.vigil.probe;
