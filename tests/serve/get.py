#!/usr/bin/env python3
"""One HTTP GET for the serve tests, with no redirects followed.

usage: get.py URL OUT [HEADER: VALUE]...
Writes the body to OUT and prints the status, then each response header as
"name: value" (lower-case name), one a line.  Exit 0 whatever the status;
1 when the server cannot be reached.
"""
import http.client
import sys
import urllib.parse

url, out = sys.argv[1], sys.argv[2]
u = urllib.parse.urlsplit(url)
conn = http.client.HTTPConnection(u.hostname, u.port, timeout=20)
headers = {}
for h in sys.argv[3:]:
    k, v = h.split(":", 1)
    headers[k.strip()] = v.strip()
path = u.path + ("?" + u.query if u.query else "")
try:
    if "Host" in headers:
        conn.putrequest("GET", path, skip_host=True)
    else:
        conn.putrequest("GET", path)
    for k, v in headers.items():
        conn.putheader(k, v)
    conn.endheaders()
    resp = conn.getresponse()
except OSError as e:
    print("cannot reach %s: %s" % (url, e), file=sys.stderr)
    sys.exit(1)
body = resp.read()
open(out, "wb").write(body)
print(resp.status)
for k, v in resp.getheaders():
    print("%s: %s" % (k.lower(), v))
