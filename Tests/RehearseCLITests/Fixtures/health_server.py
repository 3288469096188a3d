# A real HTTP health endpoint for the probe tests: prints its port, then serves fixed answers.
# With two arguments (a certificate and its key) it serves https instead.
import gzip, http.server, json, socketserver, ssl, sys, time
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
        elif self.path == "/drip":
            # slowloris: a head promising a large body, then one byte every 0.2 s (for 60 s at most)
            self.send_response(200)
            self.send_header("Content-Length", "100000")
            self.end_headers()
            try:
                for _ in range(300):
                    self.wfile.write(b" "); self.wfile.flush(); time.sleep(0.2)
            except OSError:
                pass
        elif self.path == "/gzip":
            # a gzip bomb sent whatever the request asked: 50 MB of JSON in about 50 KB
            data = gzip.compress(b'{"applicationHealthState": "Healthy", "pad": "' + b"x" * 50_000_000 + b'"}')
            self.send_response(200)
            self.send_header("Content-Encoding", "gzip")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        elif self.path == "/echo-encoding":
            self.send(200, json.dumps({"applicationHealthState": "Healthy" if self.headers.get("Accept-Encoding") is None else "Unhealthy"}))
        else:
            self.send(404, "no")
class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
s = S(("127.0.0.1", 0), H)
if len(sys.argv) == 3:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(sys.argv[1], sys.argv[2])
    s.socket = context.wrap_socket(s.socket, server_side=True)
print(s.server_address[1], flush=True)
s.serve_forever()
