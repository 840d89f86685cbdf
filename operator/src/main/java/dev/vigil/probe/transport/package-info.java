/**
 * The sockets a probe talks over, behind one seam: {@link
 * dev.vigil.probe.transport.ProbeConnection} (bytes out, bytes in, error, close). The probe logic
 * ({@code dev.vigil.probe.http.HttpProber}'s exchange, {@code dev.vigil.probe.tcp.TcpProber}'s
 * attempt) is one implementation over it, whatever the transport.
 *
 * <p>A check with TLS (HTTPS, wss) connects with Vert.x's {@code NetClient} ({@link
 * dev.vigil.probe.transport.NetSocketConnection}, settings from {@link
 * dev.vigil.probe.transport.ClientTls}), which owns the handshake, SNI and verification. A plain
 * check opens a bare socket on the calling context's own event loop ({@link
 * dev.vigil.probe.transport.ProbeConnection#plain}): registered directly with the epoll loop
 * ({@link dev.vigil.probe.transport.EpollConnection}), or a Netty NIO channel when Vert.x runs on
 * NIO ({@link dev.vigil.probe.transport.ChannelConnection}). Why: per probe Vert.x's {@code
 * NetClient} applied every option of its {@code NetClientOptions} to the socket, opened an IPv6
 * socket for an IPv4 target and allocated a connection, options and futures, and Netty's epoll
 * channel still made six {@code epoll_ctl} and three address queries; issue 15 measured about 175
 * us of CPU per fresh-connection probe against HAProxy's 90 us with the {@code NetClient}. Both run
 * on Vert.x's own event loops with the caller's context current in their callbacks, so scheduling,
 * timers and results stay as they were.
 *
 * <p>Also here: a probe's deadline on its event loop ({@link
 * dev.vigil.probe.transport.ProbeDeadline}) and the reason a transport exception becomes ({@link
 * dev.vigil.probe.transport.TransportFailure}). Threads: everything runs on the event loop of the
 * context that opened the connection. Public API: {@code ProbeConnection} (with its {@code
 * Receiver}, {@code Connector}, {@code plain} and {@code tls}), {@code ProbeDeadline}, {@code
 * TransportFailure}, and {@code ClientTls}'s SNI name and address; the connection classes stay
 * package-private.
 */
package dev.vigil.probe.transport;
