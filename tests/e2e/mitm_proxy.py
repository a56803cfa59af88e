#!/usr/bin/env python3
"""A man in the middle between `avo run --listen` and `avo worker --connect`
for tests/e2e/mitm.sh.  It never knows the run's secret: it sees the
handshake in clear and then opaque encrypted frames, whose boundaries it
reads from their clear length prefixes (docs/protocol.md, "TCP transport").

mitm_proxy.py LISTEN_PORT_FILE ENGINE_HOST:PORT LOG [--cut-job N --cuts K] ATTACK...

Listens on 127.0.0.1 (a free port, written to LISTEN_PORT_FILE), forwards
each connection to the engine, and applies ATTACK number k to the k-th
connection; connections past the list pass untouched.

--cut-job N --cuts K  (issue 33) cut the connection while the N-th job of
                 the run is in flight (the worker gets it, its answer is
                 held back, then both sockets close), and cut K-1 more times
                 the first job of each later connection: with one worker that
                 is the same job, which the engine sends first again.  Logged
                 as "conn C cut_job fired (job #J, L bytes)".

Every encrypted frame's length goes to LOG.frames, one "e2w L" (engine to
worker) or "w2e L" line each, for the test to check that lengths are padded.
Attacks:

  hello_host     rewrite the host the worker's hello claims
  flip_job       flip one bit of the first job the engine sends
  drop_job       drop the first job the engine sends
  flip_result    flip one bit of the worker's first result
  drop_result    drop the worker's first result (its heartbeats go on)
  replay_result  deliver the worker's first result twice
  reorder        swap two of the worker's messages
  inject         insert a frame of random bytes into the worker's stream
  inject_plain   replace the worker's first result by a clear-text one
  inject_length  insert a length prefix of 1 MiB that swallows what follows
  session_replay replace the worker's stream by the one an earlier
                 connection sent (its header and first messages)
  truncate       cut the connection in the middle of the worker's result

Each attack that fires is logged to LOG as "conn K ATTACK fired".
"""
import json
import os
import random
import socket
import struct
import sys
import threading

HEADER = 24      # secretstream header
BIG = 300        # a frame longer than this is a job or a result, not a heartbeat (256 padded)

log_lock = threading.Lock()
# --cut-job: the target job, cuts left, job frames seen, whether one was cut
cut = {"job": 0, "left": 0, "seen": 0, "armed": False}
cut_lock = threading.Lock()
recorded = []    # an earlier connection's worker stream: header, then frames
record_lock = threading.Lock()


def log(path, text):
    with log_lock, open(path, "a") as f:
        f.write(text + "\n")


def log_frame(path, direction, frame):
    with log_lock, open(path + ".frames", "a") as f:
        f.write("%s %d\n" % (direction, len(frame) - 4))


def recv_exact(s, n):
    data = b""
    while len(data) < n:
        try:
            chunk = s.recv(n - len(data))
        except OSError:
            return None
        if not chunk:
            return None
        data += chunk
    return data


def read_frame(s):
    head = recv_exact(s, 4)
    if head is None:
        return None
    body = recv_exact(s, struct.unpack("<I", head)[0])
    return None if body is None else head + body


class Connection:
    def __init__(self, k, attack, worker, engine, logpath):
        self.k, self.attack, self.logpath = k, attack, logpath
        self.worker, self.engine = worker, engine
        self.fired = False
        self.held = None
        self.job_id = None
        self.cutting = False  # a cut is under way: the worker's answer is held back
        self.done = threading.Event()

    def fire(self):
        if not self.fired:
            self.fired = True
            log(self.logpath, "conn %d %s fired" % (self.k, self.attack))

    def close(self):
        for s in (self.worker, self.engine):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self.done.set()

    def cut_now(self, frame, first_here):
        """--cut-job: whether this job frame is one to cut: the N-th job of
        the run, then (while cuts are left) the first job of each later
        connection."""
        with cut_lock:
            cut["seen"] += 1
            if cut["left"] <= 0:
                return False
            if not (cut["seen"] == cut["job"] or (cut["armed"] and first_here)):
                return False
            cut["left"] -= 1
            cut["armed"] = True
            log(self.logpath, "conn %d cut_job fired (job #%d, %d bytes)"
                % (self.k, cut["seen"], len(frame) - 4))
            return True

    def engine_to_worker(self):
        """Challenge and verdict in clear, then the engine's stream."""
        src, dst = self.engine, self.worker
        try:
            for _ in range(2):
                frame = read_frame(src)
                if frame is None:
                    return self.close()
                dst.sendall(frame)
            header = recv_exact(src, HEADER)
            if header is None:
                return self.close()
            dst.sendall(header)
            n = jobs = 0
            while True:
                frame = read_frame(src)
                if frame is None:
                    return self.close()
                if n == 0 and self.attack == "flip_job":
                    self.fire()
                    frame = bytearray(frame)
                    frame[4 + len(frame) // 2] ^= 0x20
                    frame = bytes(frame)
                elif n == 0 and self.attack == "drop_job":
                    self.fire()
                    frame = b""
                big = len(frame) > BIG
                if frame:
                    log_frame(self.logpath, "e2w", frame)
                if big and cut["job"] and self.cut_now(frame, jobs == 0):
                    # The job reaches the worker, which starts it; its
                    # answer never comes back: the connection goes.
                    # The engine hears of it first, and has time to queue
                    # the job again before the worker can reconnect: were
                    # the worker first, its new connection could take the
                    # next job ahead of this one, and the cuts (each of the
                    # first job of a connection) would be shared between two
                    # jobs, neither reaching the pool's limit.
                    self.cutting = True
                    dst.sendall(frame)
                    threading.Event().wait(0.3)
                    try:
                        self.engine.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
                    threading.Event().wait(0.5)
                    return self.close()
                n += 1
                jobs += big
                dst.sendall(frame)
        except OSError:
            self.close()

    def worker_to_engine(self):
        """The hello in clear, then the worker's stream."""
        src, dst = self.worker, self.engine
        try:
            hello = read_frame(src)
            if hello is None:
                return self.close()
            if self.attack == "hello_host":
                msg = json.loads(hello[4:])
                msg["host"] = "somewhere-else"
                text = json.dumps(msg).encode()
                hello = struct.pack("<I", len(text)) + text
                self.fire()
            dst.sendall(hello)
            header = recv_exact(src, HEADER)
            if header is None:
                return self.close()
            mine = [header]
            replaying = self.attack == "session_replay"
            with record_lock:
                old = list(recorded)
            if replaying:
                if len(old) < 3:
                    log(self.logpath, "conn %d session_replay: nothing recorded" % self.k)
                    replaying = False
                else:
                    self.fire()
                    dst.sendall(old[0])
            if not replaying:
                dst.sendall(header)
            n = 0
            results = 0
            while True:
                frame = read_frame(src)
                if frame is None:
                    return self.close()
                if self.cutting:
                    continue
                log_frame(self.logpath, "w2e", frame)
                if len(mine) < 4:
                    mine.append(frame)
                    if len(mine) == 4:
                        with record_lock:
                            if not recorded:
                                recorded.extend(mine)
                out = [frame]
                big = len(frame) > BIG
                if replaying:
                    out = [old[1 + n]] if 1 + n < len(old) else []
                elif big and results == 0 and self.attack == "flip_result":
                    self.fire()
                    f = bytearray(frame)
                    f[4 + len(f) // 2] ^= 0x01
                    out = [bytes(f)]
                elif big and results == 0 and self.attack == "drop_result":
                    self.fire()
                    out = []
                elif big and results == 0 and self.attack == "replay_result":
                    self.fire()
                    out = [frame, frame]
                elif big and results == 0 and self.attack == "truncate":
                    self.fire()
                    dst.sendall(frame[: len(frame) // 2])
                    return self.close()
                elif n == 1 and self.attack == "reorder":
                    self.held = frame
                    out = []
                elif n == 2 and self.attack == "reorder":
                    self.fire()
                    out = [frame, self.held]
                elif n == 1 and self.attack == "inject":
                    self.fire()
                    junk = os.urandom(64)
                    out = [struct.pack("<I", len(junk)) + junk, frame]
                elif n == 1 and self.attack == "inject_length":
                    self.fire()
                    out = [struct.pack("<I", 1 << 20), frame]
                elif big and results == 0 and self.attack == "inject_plain":
                    # what a worker of protocol 1 would have said: every
                    # config correct at a billion GFLOP/s
                    self.fire()
                    forged = json.dumps({"id": 1, "status": "ok", "configs": [
                        {"name": "small", "correct": True, "median_s": 1e-9,
                         "gflops": 1e9}]}).encode()
                    out = [struct.pack("<I", len(forged)) + forged]
                results += big
                n += 1
                for piece in out:
                    dst.sendall(piece)
        except OSError:
            self.close()


def serve(listener, engine_address, logpath, attacks):
    host, port = engine_address.rsplit(":", 1)
    k = 0
    while True:
        worker, _ = listener.accept()
        try:
            engine = socket.create_connection((host, int(port)), timeout=10)
        except OSError:
            worker.close()
            continue
        engine.settimeout(None)
        attack = attacks[k] if k < len(attacks) else "none"
        log(logpath, "conn %d %s" % (k, attack))
        c = Connection(k, attack, worker, engine, logpath)
        for target in (c.engine_to_worker, c.worker_to_engine):
            threading.Thread(target=target, daemon=True).start()
        k += 1


def main():
    port_file, engine_address, logpath = sys.argv[1:4]
    attacks = sys.argv[4:]
    if attacks[:1] == ["--cut-job"]:
        cut["job"], cut["left"] = int(attacks[1]), int(attacks[3])
        attacks = attacks[4:]
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    with open(port_file + ".tmp", "w") as f:
        f.write(str(listener.getsockname()[1]))
    os.rename(port_file + ".tmp", port_file)
    random.seed(0)
    serve(listener, engine_address, logpath, attacks)


if __name__ == "__main__":
    main()
