#!/usr/bin/env python3
"""A Debian mirror caught in a broken sync, on the loopback, for
tests/t_fetch.sh: each suite's InRelease is the real, signed one (a copy from
the lists apt kept), and every index file it names is served with the wrong
bytes, as the registry served trixie's s390x Packages for days: apt then
rejects the index ("File has unexpected size" / "Hash Sum mismatch").

    broken_mirror.py PORT_FILE SUITE=INRELEASE...
Serves until killed; writes the port it listens on to PORT_FILE."""
import http.server
import sys

RELEASES = dict(a.split('=', 1) for a in sys.argv[2:])


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        parts = self.path.strip('/').split('/')
        # /debian/dists/SUITE/InRelease
        if len(parts) == 4 and parts[1] == 'dists' and parts[3] == 'InRelease' \
                and parts[2] in RELEASES:
            with open(RELEASES[parts[2]], 'rb') as f:
                body = f.read()
        elif 'dists' in parts and parts[-1] not in ('Release', 'Release.gpg'):
            body = b'not the index the Release file names\n' * 31
        else:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


server = http.server.HTTPServer(('127.0.0.1', 0), Handler)
with open(sys.argv[1], 'w') as f:
    f.write(str(server.server_address[1]))
server.serve_forever()
