#!/usr/bin/env python3
"""A registry on loopback for the real-systemd test (docs/registry-api.yaml's station side): GET /bikes with the
key checked and an ETag (304 when it matches), POST /sightings appended to a JSON-lines file.

Usage: registry.py PORT DIRECTORY KEY BIKES.json
- DIRECTORY/requests.log: one line per request: method, path without the query, whether the key was right, status
  (never the key itself);
- DIRECTORY/sightings.jsonl: each accepted sighting's body;
- DIRECTORY/refuse: while this file exists, POST /sightings answers 503 (an outage: sightings wait in the outbox).
"""
import hashlib
import http.server
import json
import os
import sys
import urllib.parse

PORT, DIRECTORY, KEY, BIKES = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]


class Registry(http.server.BaseHTTPRequestHandler):
    def key_ok(self, query):
        bearer = self.headers.get("Authorization", "")
        return query.get("key", [None])[0] == KEY or bearer == f"Bearer {KEY}"

    def answer(self, status, body=b"", headers=()):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def record(self, path, key_ok, status):
        with open(os.path.join(DIRECTORY, "requests.log"), "a") as log:
            log.write(f"{self.command} {path} key={'ok' if key_ok else 'wrong'} {status}\n")

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        key_ok = self.key_ok(urllib.parse.parse_qs(url.query))
        if url.path != "/bikes":
            status, body, headers = 404, b"", ()
        elif not key_ok:
            status, body, headers = 401, b"", ()
        else:
            with open(BIKES, "rb") as f:
                body = f.read()
            etag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
            if self.headers.get("If-None-Match") == etag:
                status, body, headers = 304, b"", (("ETag", etag),)
            else:
                status, headers = 200, (("ETag", etag), ("Content-Type", "application/json"))
        self.record(url.path, key_ok, status)
        self.answer(status, body, headers)

    def do_POST(self):
        url = urllib.parse.urlsplit(self.path)
        key_ok = self.key_ok(urllib.parse.parse_qs(url.query))
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if url.path != "/sightings":
            status = 404
        elif not key_ok:
            status = 401
        elif os.path.exists(os.path.join(DIRECTORY, "refuse")):
            status = 503
        else:
            json.loads(body)
            with open(os.path.join(DIRECTORY, "sightings.jsonl"), "ab") as out:
                out.write(body.strip() + b"\n")
            status = 201
        self.record(url.path, key_ok, status)
        self.answer(status)

    def log_message(self, *arguments):
        pass


http.server.ThreadingHTTPServer(("127.0.0.1", PORT), Registry).serve_forever()
