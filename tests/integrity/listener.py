"""Socket listener of the integrity suite (run.sh): accepts on 127.0.0.1,
::1 (same port, when IPv6 is there) and a Unix socket, and appends whatever
a client sends (one line per connection) to a log file. Writes the TCP port
to PORT_FILE once listening.

    listener.py UNIX_PATH LOG_FILE PORT_FILE
"""
import os
import select
import socket
import sys

unix_path, log_path, port_path = sys.argv[1:4]
socks = []
v4 = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
v4.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
v4.bind(("127.0.0.1", 0))
v4.listen(16)
socks.append(v4)
port = v4.getsockname()[1]
try:
    v6 = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    v6.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
    v6.bind(("::1", port))
    v6.listen(16)
    socks.append(v6)
except OSError:
    pass
un = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
un.bind(unix_path)
os.chmod(unix_path, 0o777)
un.listen(16)
socks.append(un)
with open(port_path + ".tmp", "w") as f:
    f.write(str(port))
os.rename(port_path + ".tmp", port_path)
while True:
    ready, _, _ = select.select(socks, [], [])
    for s in ready:
        conn, _ = s.accept()
        conn.settimeout(2)
        try:
            data = conn.recv(4096)
        except OSError:
            data = b""
        conn.close()
        with open(log_path, "ab") as log:
            log.write(b"connection: " + data.strip() + b"\n")
