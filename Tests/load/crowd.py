#!/usr/bin/env python3
"""A crowd on one server: IDLE connections that send nothing, SLOW clients sending their request heads a line at a
time, and then, ROUNDS times, one new client timed from connecting to its answer's status line.

    crowd.py PORT [IDLE] [SLOW] [ROUNDS]

The kernel completes a connection before the server accepts it, so the crowd is all connected while the server may
still be taking it from its listening socket's queue. One request first, untimed as a newcomer's ("arrival"), is
answered only once the server has accepted everything queued before it: the rounds then measure a newcomer beside a
crowd that is there, not the crowd's arrival (which took 1.1 s of a round in CI, the whole suite beside it).

Prints one JSON object: the arrival's and the new clients' statuses and times in milliseconds (a status of null: no
answer), how many of the crowd's connections the server had closed by the end, and how many it never took. Its own process, so that the test process (which spawns other
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


def newcomer(timeout):
    """One new client's status (None: no answer within the timeout) and milliseconds to it."""
    started = time.monotonic()
    try:
        connection = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        connection.sendall(b"GET /static/style.css HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        head = connection.recv(64)
        status = int(head[9:12]) if head.startswith(b"HTTP/1.1 ") else None
        connection.close()
    except OSError:
        status = None
    return {"status": status, "ms": (time.monotonic() - started) * 1000}


arrival = newcomer(timeout=30)
# The slow heads start after the arrival, so that their 10 s (the server's head deadline) is not spent on it.
for connection in slow:
    connection.sendall(b"GET /static/style.css HTTP/1.1\r\n")
answers = []
for number in range(rounds):
    for connection in slow:
        try:
            connection.sendall(b"X-Slow-%d: a\r\n" % number)
        except OSError:
            pass
    answers.append(newcomer(timeout=5))
    time.sleep(0.2)


def closed(connection):
    connection.setblocking(False)
    try:
        return connection.recv(1) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


print(json.dumps({
    "arrival": arrival,
    "answers": answers,
    "closed": sum(closed(c) for c in idle + slow),
    "notConnected": refused,
}))
