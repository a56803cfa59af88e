#!/usr/bin/env python3
"""A misbehaving remote worker for tests/e2e/remote.sh.

remote_peer.py HOST:PORT MODE [SECRET]
  wrong_secret   hello with a MAC under another secret
  other_run      right secret, but claims another run
  other_version  right secret, but another avo version
  other_fp       right secret, an evaluator fingerprint the run does not have
  garbage        not JSON at all
  oversized      announces a 1 MiB hello
  wrong_id       authenticates, takes one job, answers it with another job's id
Prints the engine's verdict ("refused: ...", "welcome", "dropped") on stdout.
"""
import hashlib
import hmac
import json
import os
import socket
import struct
import sys


def send(s, obj):
    data = json.dumps(obj).encode()
    s.sendall(struct.pack("<I", len(data)) + data)


def recv(s):
    head = b""
    while len(head) < 4:
        chunk = s.recv(4 - len(head))
        if not chunk:
            return None
        head += chunk
    (n,) = struct.unpack("<I", head)
    body = b""
    while len(body) < n:
        chunk = s.recv(n - len(body))
        if not chunk:
            return None
        body += chunk
    return json.loads(body)


def main():
    address, mode = sys.argv[1], sys.argv[2]
    secret = (sys.argv[3] if len(sys.argv) > 3 else os.environ["AVO_WORKER_SECRET"]).encode()
    host, port = address.rsplit(":", 1)
    s = socket.create_connection((host, int(port)), timeout=20)
    challenge = recv(s)
    assert challenge and challenge["type"] == "challenge", challenge
    if mode == "garbage":
        s.sendall(struct.pack("<I", 9) + b"not json!")
    elif mode == "oversized":
        s.sendall(struct.pack("<I", 1 << 20) + b"x" * 1000)
    else:
        run, version, fp = challenge["run"], challenge["version"], ""
        if mode == "other_run":
            run = run + "-other"
        if mode == "other_version":
            version = version + "-other"
        if mode == "other_fp":
            fp = "f" * 64
        key = b"another secret entirely" if mode == "wrong_secret" else secret
        nonce = os.urandom(32).hex()
        text = "avo-hello\n%s\n%s\n%s\n%s\n%s" % (challenge["nonce"], nonce, run, version, fp)
        mac = hmac.new(key, text.encode(), hashlib.sha256).hexdigest()
        send(s, {"type": "hello", "protocol": 1, "nonce": nonce, "run": run,
                 "version": version, "fingerprint": fp, "host": "rogue", "pid": os.getpid(),
                 "mac": mac})
    verdict = recv(s)
    if verdict is None:
        print("dropped")
        return
    if verdict["type"] == "refused":
        print("refused: " + verdict["reason"])
        return
    print("welcome")
    if mode == "wrong_id":
        job = recv(s)
        send(s, {"id": job["id"] + 1000, "status": "ok", "configs": []})
        print("dropped" if recv(s) is None else "still connected")


if __name__ == "__main__":
    main()
