#!/usr/bin/env python3
"""A misbehaving remote worker for tests/e2e/remote.sh (docs/protocol.md,
"TCP transport"): it speaks protocol 3 itself, the handshake in clear and
then the encrypted channel (libsodium's secretstream, through PyNaCl).

remote_peer.py HOST:PORT MODE [SECRET]
  wrong_secret   hello with a MAC under another secret
  other_run      right secret, but claims another run
  other_version  right secret, but another avo version
  other_fp       right secret, an evaluator fingerprint the run does not have
  garbage        not JSON at all
  oversized      announces a 1 MiB hello
  wrong_id       authenticates, takes one job, answers it with another job's id
  bad_rate       authenticates, takes one job, answers "ok" with every config
                 at 1e9 GFLOP/s in 1 ms (a rate its FLOPs and time do not give)
Prints the engine's verdict ("refused: ...", "welcome", "dropped") on stdout.
"""
import hashlib
import hmac
import json
import os
import socket
import struct
import sys

import nacl.bindings as sodium


def send(s, obj):
    data = json.dumps(obj).encode()
    s.sendall(struct.pack("<I", len(data)) + data)


def recv_exact(s, n):
    data = b""
    while len(data) < n:
        chunk = s.recv(n - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def recv(s):
    head = recv_exact(s, 4)
    if head is None:
        return None
    body = recv_exact(s, struct.unpack("<I", head)[0])
    return None if body is None else json.loads(body)


class Channel:
    """The worker's end of the channel: keys from the secret and both nonces
    (BLAKE2b-256, keyed), one secretstream per direction, each message
    [u32 LE length][ciphertext] with the length as additional data."""

    def __init__(self, secret, nonce_e, nonce_w):
        k = hashlib.blake2b(secret, digest_size=32).digest()

        def derive(label):
            text = ("%s\n%s\n%s" % (label, nonce_e, nonce_w)).encode()
            return hashlib.blake2b(text, digest_size=32, key=k).digest()

        self.push_key = derive("avo-transport-2 worker->engine")
        self.pull_key = derive("avo-transport-2 engine->worker")
        self.push_state = self.pull_state = None

    def seal(self, obj, final=False):
        out = b""
        if self.push_state is None:
            self.push_state = sodium.crypto_secretstream_xchacha20poly1305_state()
            out = sodium.crypto_secretstream_xchacha20poly1305_init_push(
                self.push_state, self.push_key)
        text = pad(json.dumps(obj).encode())
        head = struct.pack("<I", len(text) + sodium.crypto_secretstream_xchacha20poly1305_ABYTES)
        tag = (sodium.crypto_secretstream_xchacha20poly1305_TAG_FINAL if final
               else sodium.crypto_secretstream_xchacha20poly1305_TAG_MESSAGE)
        return out + head + sodium.crypto_secretstream_xchacha20poly1305_push(
            self.push_state, text, head, tag)

    def recv(self, s):
        if self.pull_state is None:
            header = recv_exact(s, sodium.crypto_secretstream_xchacha20poly1305_HEADERBYTES)
            if header is None:
                return None
            self.pull_state = sodium.crypto_secretstream_xchacha20poly1305_state()
            sodium.crypto_secretstream_xchacha20poly1305_init_pull(
                self.pull_state, header, self.pull_key)
        head = recv_exact(s, 4)
        if head is None:
            return None
        body = recv_exact(s, struct.unpack("<I", head)[0])
        if body is None:
            return None
        text, _tag = sodium.crypto_secretstream_xchacha20poly1305_pull(self.pull_state, body, head)
        return json.loads(unpad(text))


def pad(text):
    """ISO/IEC 7816-4 padding (0x80, zeros) to a power of two >= 256 above len."""
    size = 256
    while size <= len(text):
        size *= 2
    return text + b"\x80" + b"\0" * (size - len(text) - 1)


def unpad(text):
    n = len(text)
    assert n >= 256 and n & (n - 1) == 0, "message of %d bytes is not padded" % n
    body = text.rstrip(b"\0")
    assert body.endswith(b"\x80"), "bad padding"
    return body[:-1]


def main():
    address, mode = sys.argv[1], sys.argv[2]
    secret = (sys.argv[3] if len(sys.argv) > 3 else os.environ["AVO_WORKER_SECRET"]).encode()
    host, port = address.rsplit(":", 1)
    s = socket.create_connection((host, int(port)), timeout=20)
    challenge = recv(s)
    assert challenge and challenge["type"] == "challenge", challenge
    assert challenge["protocol"] == 3, challenge
    nonce = os.urandom(32).hex()
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
        pid, device = os.getpid(), -1
        text = "avo-hello-2\n%s\n%s\n%s\n%s\n%s\n%s\n%d\n%d" % (
            challenge["nonce"], nonce, run, version, fp, "rogue", pid, device)
        mac = hmac.new(key, text.encode(), hashlib.sha256).hexdigest()
        send(s, {"type": "hello", "protocol": 3, "nonce": nonce, "run": run,
                 "version": version, "fingerprint": fp, "host": "rogue", "pid": pid,
                 "device": device, "mac": mac})
    verdict = recv(s)
    if verdict is None:
        print("dropped")
        return
    if verdict["type"] == "refused":
        print("refused: " + verdict["reason"])
        return
    print("welcome", flush=True)
    channel = Channel(secret, challenge["nonce"], nonce)
    job = channel.recv(s)
    if job is None:
        print("dropped before a job")
        return
    if mode == "wrong_id":
        s.sendall(channel.seal({"id": job["id"] + 1000, "status": "ok", "configs": []}))
    elif mode == "bad_rate":
        configs = [{"name": c["name"], "correct": True, "max_error": 0, "median_s": 1e-3,
                    "spread": 0, "samples": 5, "gflops": 1e9, "gbs": 0}
                   for c in job.get("configs", [])]
        s.sendall(channel.seal({"id": job["id"], "status": "ok", "configs": configs}))
    try:
        while channel.recv(s) is not None:
            pass
        print("dropped")
    except (OSError, ValueError):
        print("dropped")


if __name__ == "__main__":
    main()
