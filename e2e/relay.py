#!/usr/bin/env python3
"""A TCP relay from the test hosts to the API server, for kube-proxy in a test host.

    python3 e2e/relay.py LISTEN_ADDRESS TARGET_ADDRESS TARGET_PORT [TTL]

kube-apiserver listens on 127.0.0.1 in the root network namespace, which a test host cannot
reach; kube-proxy runs inside a test host (its rules must stay there). This relay, started in the
root namespace, listens on LISTEN_ADDRESS (the bridge, 198.18.0.1) at a port the kernel picks,
prints that port on its first line, and copies bytes both ways to TARGET_ADDRESS:TARGET_PORT.
TLS passes through untouched: kube-proxy still verifies the API server's certificate (its
kubeconfig names the server 'localhost'). Exits by itself after TTL seconds (default 3600).
"""
import os
import socket
import sys
import threading


def pump(src, dst):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def serve(conn, target):
    try:
        upstream = socket.create_connection(target, timeout=10)
        upstream.settimeout(None)
    except OSError:
        conn.close()
        return
    threading.Thread(target=pump, args=(conn, upstream), daemon=True).start()
    pump(upstream, conn)
    conn.close()
    upstream.close()


def main():
    listen, target = sys.argv[1], (sys.argv[2], int(sys.argv[3]))
    ttl = float(sys.argv[4]) if len(sys.argv) > 4 else 3600.0
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind((listen, 0))
    server.listen(64)
    print(server.getsockname()[1], flush=True)
    threading.Timer(ttl, lambda: os._exit(0)).start()
    while True:
        conn, _ = server.accept()
        threading.Thread(target=serve, args=(conn, target), daemon=True).start()


if __name__ == "__main__":
    main()
