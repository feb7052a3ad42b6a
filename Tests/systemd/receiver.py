#!/usr/bin/env python3
"""The owner's end in the real-systemd test: a webhook receiver on loopback that checks each message's Standard
Webhooks signature with the bike's secret and appends what it got to DIRECTORY/received.jsonl.

Usage: receiver.py PORT DIRECTORY   (the secret is read from DIRECTORY/secret at each message, as it changes)
"""
import base64, hashlib, hmac, http.server, json, os, sys

port, directory = int(sys.argv[1]), sys.argv[2]


class Receiver(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        try:
            secret = open(os.path.join(directory, "secret")).read().strip()
            key = base64.b64decode(secret.removeprefix("whsec_"))
            signed = f'{self.headers["webhook-id"]}.{self.headers["webhook-timestamp"]}.'.encode() + body
            expected = "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
            valid = any(hmac.compare_digest(expected, part) for part in self.headers.get("webhook-signature", "").split())
        except (OSError, KeyError, ValueError):
            valid = False
        record = {"path": self.path, "id": self.headers.get("webhook-id"), "valid": valid, "body": json.loads(body or b"null")}
        with open(os.path.join(directory, "received.jsonl"), "a") as out:
            out.write(json.dumps(record) + "\n")
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


http.server.ThreadingHTTPServer(("127.0.0.1", port), Receiver).serve_forever()
