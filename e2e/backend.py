#!/usr/bin/env python3
"""A test backend for Vigil's *E2E tests, run inside a test host's network namespace.

    ip netns exec vigil-h1 python3 e2e/backend.py 198.18.0.11 8080 /tmp/mode-h1

Answers every path on ADDRESS:PORT according to the first word of MODE_FILE, read on each
request (a missing file means healthy):

    healthy   200 "ok ADDRESS"
    failing   503 "failing ADDRESS"
    hang      accepts, reads the request and never answers (the prober's timeout fires)
    abody     200 with 60,000 "a" then "!" (a body on which a backtracking regex explodes, and RE2 spends ~0.1 s)
    flap      200 and 503 in turn, request after request
    errors    503 "failing ADDRESS" to every path but the health path (BACKEND_HEALTH_PATH in the
              environment, default /healthz), which answers 200: real requests fail while an
              active check of that path passes (what only passive checks catch)

With BACKEND_TLS_CERT and BACKEND_TLS_KEY (PEM files) in the environment it serves HTTPS; with
BACKEND_TLS_CLIENT_CA as well it demands a client certificate that CA signed (mTLS), and refuses a
handshake without one.

With BACKEND_AGENT_PORT and BACKEND_AGENT_FILE in the environment it also answers HAProxy's agent
check on ADDRESS:BACKEND_AGENT_PORT: each connection gets the first line of the file (read then;
missing: "up") and is closed.

With BACKEND_LOG_REQUESTS=1 in the environment each request prints a line "request PATH", so a
test counts the requests at the backend itself, and each 5xx answer then a line
"failed PATH STATUS EPOCH_MS" (wall-clock milliseconds when it decided to fail): the backend's own
record of when a request first failed, the start of a passive-detection measurement.

Every answer names the backend (its address) in the body and in an X-Backend header, so a
client behind kube-proxy or an ingress (e2e/traffic.py) sees which backend served it.
"Connection refused" is the test killing this process. Exits by itself after --ttl seconds
(default 1800), so a crashed test JVM leaves no server behind for long.
"""
import http.server
import os
import socketserver
import ssl
import sys
import threading
import time


def main():
    address, port, mode_file = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    ttl = float(sys.argv[4]) if len(sys.argv) > 4 else 1800.0

    def mode():
        try:
            with open(mode_file) as f:
                return (f.read().split() or ["healthy"])[0]
        except OSError:
            return "healthy"

    log_requests = os.environ.get("BACKEND_LOG_REQUESTS") == "1"
    health_path = os.environ.get("BACKEND_HEALTH_PATH", "/healthz")
    turns = [0]
    turn_lock = threading.Lock()

    def flap():
        with turn_lock:
            turns[0] += 1
            return turns[0] % 2 == 0

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self):
            if log_requests:
                print("request %s" % self.path, flush=True)
            m = mode()
            if m == "hang":
                time.sleep(ttl)
                return
            failing = (
                m == "failing"
                or (m == "flap" and flap())
                or (m == "errors" and self.path.split("?")[0] != health_path)
            )
            code, word = (503, "failing") if failing else (200, "ok")
            if failing and log_requests:
                print("failed %s %d %d" % (self.path, code, int(time.time() * 1000)), flush=True)
            body = ("%s %s\n" % (word, address)).encode()
            if m == "abody":
                body = b"a" * 60000 + b"!"
            self.send_response(code)
            self.send_header("Content-Type", "text/plain")
            self.send_header("X-Backend", address)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_HEAD = do_GET

        def log_message(self, fmt, *args):
            pass

    server = http.server.ThreadingHTTPServer((address, port), Handler)
    server.daemon_threads = True
    if os.environ.get("BACKEND_TLS_CERT"):
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(os.environ["BACKEND_TLS_CERT"], os.environ["BACKEND_TLS_KEY"])
        if os.environ.get("BACKEND_TLS_CLIENT_CA"):
            context.verify_mode = ssl.CERT_REQUIRED
            context.load_verify_locations(os.environ["BACKEND_TLS_CLIENT_CA"])
        server.socket = context.wrap_socket(server.socket, server_side=True)
    if os.environ.get("BACKEND_AGENT_PORT"):
        serve_agent(address, int(os.environ["BACKEND_AGENT_PORT"]), os.environ["BACKEND_AGENT_FILE"])
    threading.Timer(ttl, lambda: os._exit(0)).start()
    print("listening on %s:%d" % (address, port), flush=True)
    server.serve_forever()


def serve_agent(address, port, reply_file):
    """HAProxy's agent check: one reply line per connection, then close."""

    class Agent(socketserver.BaseRequestHandler):
        def handle(self):
            try:
                with open(reply_file) as f:
                    line = f.readline().strip() or "up"
            except OSError:
                line = "up"
            self.request.sendall((line + "\n").encode())

    class Server(socketserver.ThreadingTCPServer):
        # the agent closes each connection first, so its side keeps them in TIME_WAIT: a backend
        # started again on the same address within a minute must still bind
        allow_reuse_address = True
        daemon_threads = True

    server = Server((address, port), Agent)
    threading.Thread(target=server.serve_forever, daemon=True).start()


if __name__ == "__main__":
    main()
