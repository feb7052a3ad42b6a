# A registry that is down for sightings (Fixtures/outbox/README.md): arguments PORT BIKES.JSON.
# The first sighting it sees gets a 422 (a dead letter), every other a 503.
import http.server, json, sys
first = []
class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_GET(self):
        body = open(sys.argv[2], 'rb').read()
        self.send_response(200); self.send_header('Content-Type', 'application/json'); self.send_header('Content-Length', str(len(body))); self.end_headers(); self.wfile.write(body)
    def do_POST(self):
        length = int(self.headers.get('Content-Length', 0)); data = json.loads(self.rfile.read(length))
        if not first: first.append(data['sightingId'])
        code = 422 if data['sightingId'] == first[0] else 503
        self.send_response(code); self.send_header('Content-Length', '0'); self.end_headers()
http.server.HTTPServer(('127.0.0.1', int(sys.argv[1])), Handler).serve_forever()
