#!/usr/bin/env python3
"""Throughput, memory and archive size of long runs (bench/throughput.sh).

    throughput.py AVO OUTDIR PT_COUNT LLM_COUNT BASE_URL

Runs bench/throughput.lua twice: PT_COUNT candidates with param_tweak, then
LLM_COUNT with llm_mutate against the fake LLM server at BASE_URL.  While a
run goes, the engine's CPU time is sampled from /proc, so each tenth of the
candidates gets two rates: evaluations per wall second (what a user sees,
noisy on a shared machine) and evaluations per engine CPU second (the
engine's own cost, what grows if something in it grows with the run).  At
the end: peak RSS, archive bytes per candidate, and how long `avo runs`,
`avo best`, `avo report` and one `avo serve` page take on that archive.
"""
import os
import re
import resource
import sqlite3
import subprocess
import sys
import time
import urllib.request

AVO, OUT, PT_COUNT, LLM_COUNT, BASE_URL = sys.argv[1:6]
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime + stime


def run(op, count):
    db = os.path.join(OUT, f"{op}.db")
    env = dict(os.environ, AVO_LLM_CONCURRENCY=os.environ.get("AVO_LLM_CONCURRENCY", "8"))
    cmd = [AVO, "run", "bench/throughput.lua", "--db", db, "--max-evals", str(count),
           "--jobs", "2", "--retime", "0", f"op={op}", f"base_url={BASE_URL}"]
    start = time.time()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL,
                            stderr=open(os.path.join(OUT, f"{op}.log"), "w"))
    samples = []  # (wall time, engine CPU seconds)
    while proc.poll() is None:
        try:
            samples.append((time.time(), cpu_seconds(proc.pid)))
        except (OSError, IndexError):
            pass
        time.sleep(0.2)
    _, status, usage = os.wait4(proc.pid, 0) if proc.returncode is None else (0, 0, None)
    if proc.returncode:
        sys.exit(f"throughput: the {op} run failed (see {OUT}/{op}.log)")
    wall = time.time() - start
    return db, samples, wall


def cpu_at(samples, t):
    """Engine CPU seconds at wall time t, interpolated between samples."""
    prev = (samples[0][0], 0.0) if samples else (t, 0.0)
    for s in samples:
        if s[0] >= t:
            if s[0] == prev[0]:
                return s[1]
            return prev[1] + (s[1] - prev[1]) * (t - prev[0]) / (s[0] - prev[0])
        prev = s
    return prev[1]


def tenths(db, samples):
    con = sqlite3.connect(db)
    t = [r[0] for r in con.execute(
        "SELECT evaluated_at FROM candidates WHERE evaluated_at IS NOT NULL ORDER BY evaluated_at")]
    begin = con.execute("SELECT min(created_at) FROM candidates").fetchone()[0]
    n = len(t)
    wall, cpu = [], []
    prev_t = begin
    for k in range(1, 11):
        last = t[n * k // 10 - 1]
        size = n * k // 10 - n * (k - 1) // 10
        wall.append(size / max(last - prev_t, 1e-9))
        cpu.append(size / max(cpu_at(samples, last) - cpu_at(samples, prev_t), 1e-3))
        prev_t = last
    return n, wall, cpu


def timed(cmd, **kw):
    start = time.time()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kw)
    return time.time() - start


def serve_once(db):
    """Seconds for one `avo serve` page of the run, the server started first."""
    proc = subprocess.Popen([AVO, "serve", "--db", db, "--listen", "127.0.0.1:0"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        url = None
        for line in proc.stdout:
            m = re.search(r"(http://\S+)", line)
            if m:
                url = m.group(1)
                break
        if not url:
            sys.exit("throughput: avo serve printed no URL")
        base = url.split("?")[0].rstrip("/")
        out = {}
        for name, path in (("index", "/"), ("run page", "/a/0/run/1")):
            start = time.time()
            with urllib.request.urlopen(base + path, timeout=120) as r:
                r.read()
            out[name] = time.time() - start
        return out
    finally:
        proc.terminate()
        proc.wait()


def report(op, count):
    db, samples, wall = run(op, count)
    n, wall_rates, cpu_rates = tenths(db, samples)
    print(f"{op}: {n} candidates in {wall:.1f} s, engine CPU {samples[-1][1]:.1f} s")
    print("  evaluations / wall s, per tenth: " + " ".join(f"{r:.0f}" for r in wall_rates) +
          f"   last/first {wall_rates[-1] / wall_rates[0]:.2f}")
    print("  evaluations / engine CPU s, per tenth: " + " ".join(f"{r:.0f}" for r in cpu_rates) +
          f"   last/first {cpu_rates[-1] / cpu_rates[0]:.2f}")
    return db, n


def sizes(db, n):
    size = sum(os.path.getsize(p) for p in (db, db + "-wal") if os.path.exists(p))
    return size, size / n


if __name__ == "__main__":
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    results = {}
    for op, count in (("param_tweak", int(PT_COUNT)), ("llm_mutate", int(LLM_COUNT))):
        if count > 0:
            results[op] = report(op, count)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"peak RSS of the engine (largest run): {peak:.0f} MiB")
    for op, (db, n) in results.items():
        size, per = sizes(db, n)
        print(f"{op} archive: {size / 2**20:.1f} MiB, {per:.0f} bytes per candidate")
        t_runs = timed([AVO, "runs", "--db", db])
        t_best = timed([AVO, "best", "--db", db])
        t_report = timed([AVO, "report", "--db", db, "-o", os.path.join(OUT, op + ".html")])
        serve = serve_once(db)
        print(f"  avo runs {t_runs:.2f} s, avo best {t_best:.2f} s, avo report {t_report:.2f} s, "
              f"avo serve: index {serve['index']:.2f} s, run page {serve['run page']:.2f} s")
