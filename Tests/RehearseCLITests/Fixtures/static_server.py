# A bundle repository for the install tests: serves one folder over HTTP on 127.0.0.1 and prints
# its port first.
import functools, http.server, socketserver, sys

class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass

handler = functools.partial(Quiet, directory=sys.argv[1])
with socketserver.TCPServer(("127.0.0.1", 0), handler) as server:
    print(server.server_address[1], flush=True)
    server.serve_forever()
