#!/bin/sh
# The surrogate strategy's decision time as its run grows: COUNT
# evaluations (default 1000) on each landscape (the NK landscape and the
# GEMM space, scored in-process, so the time between two candidates is the
# time the strategy took to choose), printed as milliseconds per candidate
# for each BLOCK of candidates (default 100): engine CPU time (sampled from
# /proc, what the strategy costs) and wall time (noisy on a shared machine),
# then the last block against the first (bounded: about 1) and, as the
# baseline measured in the same run, the random strategy's CPU per
# candidate over the same COUNT (the engine's own cost of a candidate).
# EXTRA (optional) is appended to the surrogate's options (", max_train = 200");
# past 1,000 candidates give ", iterations = 100000" (its default is 1000 rounds).
# REPEATS (default 1) runs the surrogate that many times on each landscape and
# adds the median of each block over the runs (a shared machine moves a block
# by a millisecond from run to run: quote the medians).
#
#   bench/surrogate_time.sh build/avo [COUNT] [BLOCK] [EXTRA] [REPEATS]
set -eu
avo=$(realpath "$1")
count=${2:-1000}
block=${3:-100}
extra=${4:-}
repeats=${5:-1}
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for landscape in landscape gemm_space; do
    printf 'local avo = require "avo"\nreturn avo.strategy("surrogate").run{ evaluator = "bench/%s.lua"%s }\n' \
        "$landscape" "$extra" >"$tmp/run.lua"
    printf 'local avo = require "avo"\nreturn avo.strategy("random").run{ evaluator = "bench/%s.lua", samples = %s }\n' \
        "$landscape" "$count" >"$tmp/random.lua"
    python3 - "$avo" "$tmp" "$count" "$landscape" "$block" "$repeats" <<'PY'
import os, sqlite3, statistics, subprocess, sys, time
avo, tmp, count, name, block, repeats = sys.argv[1:7]
block, repeats, ticks = int(block), int(repeats), os.sysconf("SC_CLK_TCK")

def run(script, db):
    """Runs one strategy; returns the candidates' times and a CPU-at-time function."""
    # stderr to a file: a pipe nobody reads fills with the progress lines of a
    # long run and stops it.
    err = open(db + ".err", "w+")
    proc = subprocess.Popen([avo, "run", script, "--db", db, "--jobs", "1", "--max-evals", count,
                             "--retime", "0"], stdout=subprocess.DEVNULL, stderr=err)
    samples = []
    while proc.poll() is None:
        try:
            with open(f"/proc/{proc.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            samples.append((time.time(), (int(fields[11]) + int(fields[12])) / ticks))
        except (OSError, IndexError):
            pass
        time.sleep(0.1)
    if proc.returncode:
        err.seek(0)
        sys.exit(err.read()[-2000:])
    def cpu_at(t):
        prev = (samples[0][0], 0.0) if samples else (t, 0.0)
        for s in samples:
            if s[0] >= t:
                return prev[1] + (s[1] - prev[1]) * (t - prev[0]) / max(s[0] - prev[0], 1e-9)
            prev = s
        return prev[1]
    t = [r[0] for r in sqlite3.connect(db).execute("SELECT created_at FROM candidates ORDER BY id")]
    return t, cpu_at

runs = []
for r in range(repeats):
    t, cpu_at = run(os.path.join(tmp, "run.lua"), os.path.join(tmp, f"{name}.{r}.db"))
    cpu, wall, per = [], [], []
    for lo in range(0, len(t) - 1, block):
        hi = min(lo + block, len(t) - 1)
        per.append((cpu_at(t[hi]) - cpu_at(t[lo])) / (hi - lo) * 1e3)
        cpu.append(f"{lo + 1}-{hi + 1}: {per[-1]:.1f}")
        wall.append(f"{(t[hi] - t[lo]) / (hi - lo) * 1e3:.1f}")
    print(f"surrogate on {name}{f' (run {r + 1} of {repeats})' if repeats > 1 else ''}, {len(t)} "
          "candidates, ms per candidate by block, CPU: " + ", ".join(cpu), flush=True)
    print(f"  wall: " + ", ".join(wall), flush=True)
    runs.append(per)
if repeats > 1:
    n = min(len(p) for p in runs)
    per = [statistics.median(p[i] for p in runs) for i in range(n)]
    print(f"  median over {repeats} runs, CPU: " + ", ".join(f"{x:.1f}" for x in per))
rt, rcpu = run(os.path.join(tmp, "random.lua"), os.path.join(tmp, name + "_random.db"))
base = (rcpu(rt[-1]) - rcpu(rt[0])) / max(len(rt) - 1, 1) * 1e3
full = [p for lo, p in zip(range(0, len(t) - 1, block), per) if lo + block <= len(t) - 1]
if len(full) >= 2:
    print(f"  last block / first block: {full[-1] / full[0]:.2f}; last block / second: "
          f"{full[-1] / full[1]:.2f}")
print(f"  baseline, random on {name}: {base:.2f} ms of CPU per candidate ({len(rt)} candidates); "
      f"surrogate's last block: {full[-1] / max(base, 1e-3):.0f}x" if full else "")
PY
done
