#!/usr/bin/env python3
"""A broken debuginfod server, for tests: fake-server.py MODE PORTFILE

MODE is
  hang       accept every connection, read the request, never answer
  404        answer every request with 404 Not Found, as a server that does
             not have the file
  blackhole  never accept: the listen queue is kept full, so that the
             kernel drops new connections' SYNs and connect() waits, as
             with a firewall that drops packets (libcurl's own connect
             timeout is 300 s)

It listens on 127.0.0.1 on a free port, writes the port number to
PORTFILE once it is listening, and serves until it is killed.
"""
import os
import socket
import sys
import threading
import time


def hang(conn):
    try:
        conn.recv(65536)
        time.sleep(3600)
    finally:
        conn.close()


def not_found(conn):
    try:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                return
            data += chunk
        body = b"not found\n"
        conn.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\n"
                     b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body)
    finally:
        conn.close()


def fill_queue(port):
    """Connections of our own that nobody accepts: with a backlog of 0 the
    queue holds one, and the kernel drops the SYNs of the next ones."""
    held = []
    for _ in range(4):
        c = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        c.setblocking(False)
        try:
            c.connect(("127.0.0.1", port))
        except BlockingIOError:
            pass
        held.append(c)
    time.sleep(0.5)
    return held


def main():
    mode, portfile = sys.argv[1], sys.argv[2]
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(0 if mode == "blackhole" else 64)
    held = fill_queue(srv.getsockname()[1]) if mode == "blackhole" else []
    tmp = portfile + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.getsockname()[1])
    os.rename(tmp, portfile)
    if held:
        while True:
            time.sleep(3600)
    handler = {"hang": hang, "404": not_found}[mode]
    while True:
        conn, _ = srv.accept()
        threading.Thread(target=handler, args=(conn,), daemon=True).start()


if __name__ == "__main__":
    main()
