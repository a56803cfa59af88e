#!/usr/bin/env python3
"""Every avo strategy against random sampling on the benchmark landscapes.

    vs_random.py AVO [--seeds N] [--budgets 50,150] [--landscapes nk,gemm]
                 [--strategies random,ga,islands,map_elites,surrogate,linesearch]

For each landscape (the NK landscape, bench/landscape.lua; the GEMM space
with restrictions, bench/gemm_space.lua), budget (unique evaluations) and
seed, runs each strategy with its defaults and prints the median, quartiles
and range of best found / optimum, the median ratio to random's best on the
same seed, and whether the strategy's median is at least random's (the
floor every strategy should clear, issue 31).  Random sampling, measured in
the same run, is the baseline.  Needs only python3 (no Kernel Tuner:
bench/vs_kernel_tuner.sh compares with it).
"""
import argparse
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LANDSCAPES = {
    "nk": ("NK landscape (bench/landscape.lua: N = 10, K = 2, 4^10 points)",
           "bench/landscape.lua", ["K1", "K2"]),
    "gemm": ("GEMM space (bench/gemm_space.lua: 14 CLBlast xgemm knobs, restrictions)",
             "bench/gemm_space.lua", ["MWG", "NWG"]),
}
# The options bench/vs_kernel_tuner.py gives: the defaults, only enough
# rounds that the budget ends every run, and map_elites' dims.
OPTIONS = {
    "random": "samples = 100000",
    "ga": "generations = 100000",
    "islands": "generations = 100000",
    "map_elites": "dims = {DIMS}, iterations = 100000",
    "surrogate": "",
    "linesearch": "sweeps = 100000",
}


def optimum(avo, evaluator, tmp):
    out = subprocess.run([avo, "run", "bench/dump_space.lua", "--db", os.path.join(tmp, "dump.db"),
                          f"evaluator={evaluator}"], cwd=ROOT, check=True, capture_output=True,
                         text=True).stdout.splitlines()
    return float(out[1].split()[1])


def run(avo, landscape, strategy, budget, seed, tmp):
    _, evaluator, dims = LANDSCAPES[landscape]
    opts = OPTIONS[strategy].replace("{DIMS}", "{ " + ", ".join(f"'{d}'" for d in dims) + " }")
    script = os.path.join(tmp, f"{landscape}_{strategy}.lua")
    with open(script, "w") as f:
        f.write('local avo = require "avo"\n'
                f'return avo.strategy("{strategy}").run{{ evaluator = "{evaluator}"'
                + (f", {opts}" if opts else "") + " }\n")
    db = os.path.join(tmp, f"{landscape}_{strategy}_{budget}_{seed}.db")
    proc = subprocess.run([avo, "run", script, "--db", db, "--seed", str(seed), "--jobs", "1",
                           "--max-evals", str(budget)], cwd=ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"vs_random: {strategy} on {landscape} (seed {seed}) failed:\n{proc.stderr[-2000:]}")
    with sqlite3.connect(db) as con:
        best, n = con.execute("SELECT max(CASE WHEN status = 'ok' THEN score END), count(*) "
                              "FROM candidates").fetchone()
    os.unlink(db)
    if n > budget:
        sys.exit(f"vs_random: {strategy} evaluated {n} > {budget} candidates")
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("avo")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--budgets", default="50,150")
    ap.add_argument("--landscapes", default="nk,gemm")
    ap.add_argument("--strategies", default=",".join(OPTIONS))
    args = ap.parse_args()
    avo = os.path.abspath(args.avo)
    seeds = range(1, args.seeds + 1)
    strategies = args.strategies.split(",")
    if "random" not in strategies:
        strategies.insert(0, "random")
    below = 0
    with tempfile.TemporaryDirectory() as tmp:
        for landscape in args.landscapes.split(","):
            title, evaluator, _ = LANDSCAPES[landscape]
            opt = optimum(avo, evaluator, tmp)
            for budget in [int(b) for b in args.budgets.split(",")]:
                print(f"{title}, optimum {opt:.6g}, {budget} evaluations, {len(seeds)} seeds")
                print(f"  {'strategy':<11} {'median':>7} {'q1':>6} {'q3':>6} {'min':>6} {'max':>6}"
                      f" {'ratio to random':>16}  >= random")
                best = {s: [run(avo, landscape, s, budget, seed, tmp) / opt for seed in seeds]
                        for s in strategies}
                for s in strategies:
                    v = sorted(best[s])
                    q = statistics.quantiles(v, n=4) if len(v) > 1 else [v[0]] * 3
                    ratio = statistics.median(a / b for a, b in zip(best[s], best["random"]))
                    ok = statistics.median(v) >= statistics.median(best["random"])
                    below += not ok
                    print(f"  {s:<11} {statistics.median(v):>7.4f} {q[0]:>6.3f} {q[2]:>6.3f} "
                          f"{v[0]:>6.3f} {v[-1]:>6.3f} {ratio:>16.3f}  {'yes' if ok else 'NO'}")
                sys.stdout.flush()
    print(f"strategies whose median is below random's: {below}")


if __name__ == "__main__":
    main()
