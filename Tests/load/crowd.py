#!/usr/bin/env python3
"""A crowd on one server: IDLE connections that send nothing, SLOW clients sending their request heads a line at a
time, and then, ROUNDS times, one new client timed from connecting to its answer's status line.

    crowd.py PORT [IDLE] [SLOW] [ROUNDS]

Prints one JSON object: the new clients' statuses and times in milliseconds (a status of null: no answer), how
many of the crowd's connections the server had closed by the end, and how many it never took. Its own process, so that the test process (which spawns other
processes beside it, and whose Foundation cannot spawn one with thousands of descriptors open) holds none of them.
"""
import json
import resource
import socket
import sys
import time

port = int(sys.argv[1])
defaults = [2000, 100, 5]
idle_count, slow_count, rounds = [int(a) for a in sys.argv[2:5]] + defaults[len(sys.argv[2:5]):]

soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
wanted = idle_count + slow_count + 64
if soft < wanted:
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(wanted, hard), hard))


refused = 0


def connect():
    """A crowd member's connection, or None (counted) when the server took none within 2 s; after ten such, the
    server is taking none, and the rest are counted without trying."""
    global refused
    if refused >= 10:
        refused += 1
        return None
    try:
        return socket.create_connection(("127.0.0.1", port), timeout=2)
    except OSError:
        refused += 1
        return None


idle = [c for c in (connect() for _ in range(idle_count)) if c]
slow = [c for c in (connect() for _ in range(slow_count)) if c]
for connection in slow:
    connection.sendall(b"GET /static/style.css HTTP/1.1\r\n")

answers = []
for number in range(rounds):
    for connection in slow:
        try:
            connection.sendall(b"X-Slow-%d: a\r\n" % number)
        except OSError:
            pass
    started = time.monotonic()
    try:
        newcomer = socket.create_connection(("127.0.0.1", port), timeout=5)
        newcomer.sendall(b"GET /static/style.css HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        head = newcomer.recv(64)
        status = int(head[9:12]) if head.startswith(b"HTTP/1.1 ") else None
        newcomer.close()
    except OSError:
        status = None
    answers.append({"status": status, "ms": (time.monotonic() - started) * 1000})
    time.sleep(0.2)


def closed(connection):
    connection.setblocking(False)
    try:
        return connection.recv(1) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


print(json.dumps({"answers": answers, "closed": sum(closed(c) for c in idle + slow), "notConnected": refused}))
