#!/usr/bin/env python3
"""Real traffic for Vigil's consumer tests: HTTP requests through kube-proxy or an ingress.

    python3 e2e/traffic.py URL [--host HOST] [--interval-ms 10] [--duration 30] [--timeout 1]

Sends GET URL, each on a new TCP connection (so every request is balanced afresh: kube-proxy
picks a backend per connection), one after another, starting one every --interval-ms at most,
for --duration seconds (the bound), each with --timeout seconds. Prints one line per request:

    START_MS END_MS OUTCOME BACKEND

START_MS/END_MS are wall-clock epoch milliseconds (the test compares them with its own clock);
OUTCOME is the HTTP status or refused|reset|timeout|error; BACKEND is the name the backend put
in its answer's X-Backend header (e2e/backend.py does), or '-' when no backend answered (refused,
or an answer of the proxy itself such as Traefik's 502 and 503).
Run it inside a test host (ip netns exec) to reach a ClusterIP that kube-proxy programs there.
"""
import argparse
import http.client
import socket
import sys
import time
import urllib.parse


def one(host, port, path, host_header, timeout):
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        headers = {"Connection": "close"}
        if host_header:
            headers["Host"] = host_header
        conn.request("GET", path, headers=headers)
        resp = conn.getresponse()
        resp.read(4096)
        return str(resp.status), resp.getheader("X-Backend") or "-"
    except ConnectionRefusedError:
        return "refused", "-"
    except ConnectionResetError:
        return "reset", "-"
    except (socket.timeout, TimeoutError):
        return "timeout", "-"
    except (OSError, http.client.HTTPException) as e:
        return "error:" + type(e).__name__, "-"
    finally:
        conn.close()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("url")
    p.add_argument("--host", default=None)
    p.add_argument("--interval-ms", type=float, default=10.0)
    p.add_argument("--duration", type=float, default=30.0)
    p.add_argument("--timeout", type=float, default=1.0)
    a = p.parse_args()
    u = urllib.parse.urlsplit(a.url)
    path = u.path or "/"
    end = time.time() + a.duration
    interval = a.interval_ms / 1000.0
    nxt = time.time()
    out = sys.stdout
    while True:
        now = time.time()
        if now >= end:
            break
        if now < nxt:
            time.sleep(nxt - now)
        start = time.time()
        nxt = start + interval
        outcome, name = one(u.hostname, u.port or 80, path, a.host, a.timeout)
        out.write("%d %d %s %s\n" % (start * 1000, time.time() * 1000, outcome, name))
        out.flush()


if __name__ == "__main__":
    main()
