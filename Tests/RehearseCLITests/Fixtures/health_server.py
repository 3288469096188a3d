# A real HTTP health endpoint for the probe tests: prints its port, then serves fixed answers.
import http.server, json, socketserver, sys, time
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def send(self, code, body, headers=()):
        data = body.encode()
        self.send_response(code)
        for k, v in headers: self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    def do_GET(self):
        if self.path == "/healthy":
            self.send(200, json.dumps({"applicationHealthState": "Healthy", "customMetrics": json.dumps({"rollingUpgrade": {"PhaseOrderingNumber": 1}})}))
        elif self.path == "/object":
            self.send(200, json.dumps({"ApplicationHealthState": "Healthy", "CustomMetrics": {"RollingUpgrade": {"PhaseOrderingNumber": 0}}}))
        elif self.path == "/down":
            self.send(503, json.dumps({"applicationHealthState": "Healthy"}))
        elif self.path == "/redirect":
            self.send(302, "", [("Location", "/healthy")])
        elif self.path == "/huge":
            self.send(200, "{\"applicationHealthState\": \"Healthy\", \"pad\": \"" + "x" * 100000 + "\"}")
        elif self.path == "/slow":
            time.sleep(3); self.send(200, "{}")
        else:
            self.send(404, "no")
class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
s = S(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
