/**
 * HTTP checks: {@link dev.vigil.probe.http.HttpProber} (HTTP/1.1, HTTPS and WebSocket upgrades over
 * a {@code dev.vigil.probe.transport.ProbeConnection}) and {@link dev.vigil.probe.http.Http2Prober}
 * (h2c, or ALPN h2 over TLS, on Vert.x's HTTP client), and the pure pieces they share: {@link
 * dev.vigil.probe.http.HttpResponseParser} (status line, headers and at most 64 KiB of body,
 * incrementally), {@link dev.vigil.probe.http.StatusLineClassifier} (the verdict of a status line,
 * also used by {@code replay}) and {@link dev.vigil.probe.ExpectedStatuses} (codes and ranges as a
 * policy writes them).
 *
 * <p>Each prober turns one request into one {@code dev.vigil.probe.ProbeResult} and nothing else;
 * its callbacks run on the Vert.x context that started the probe.
 */
package dev.vigil.probe.http;
