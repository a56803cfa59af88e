#!/usr/bin/env python3
"""avo's strategies against Kernel Tuner's on the same landscapes.

Run through bench/vs_kernel_tuner.sh (it finds the Python that has
kernel_tuner).  For each landscape (bench/landscape.lua: the NK landscape;
bench/gemm_space.lua: a CLBlast-style GEMM space with Kernel Tuner's
restrictions) and each budget of unique evaluations, every strategy of both
tools runs once per seed; the best score found is divided by the landscape's
optimum.  Printed per strategy: the median, the quartiles and the range over
the seeds; then avo's best strategy against Kernel Tuner's best (by median)
with a one-sided Mann-Whitney U test.

Both tools see the same values: `avo run bench/dump_space.lua` prints the
score of every configuration (restricted ones marked), and Kernel Tuner's
SimulationRunner answers each evaluation from a cache holding exactly those
values.  The cache is handed to Kernel Tuner in memory (a mapping computed
from the table, behind its own cache-file header and checks) rather than as
a JSON file of a million entries; the SimulationRunner, its unique-evaluation
budget (max_fevals) and the strategies are Kernel Tuner's own, unchanged.
The restrictions are given to Kernel Tuner as its `restrictions` strings;
the driver checks that its search space equals the set of valid
configurations avo's evaluator allows.  Nothing here times anything.
"""

import argparse
import json
import math
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np

warnings.filterwarnings("ignore")

import kernel_tuner  # noqa: E402
import kernel_tuner.interface as kt_interface  # noqa: E402
import kernel_tuner.util as kt_util  # noqa: E402
from kernel_tuner.searchspace import Searchspace  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The landscapes: avo evaluator, Kernel Tuner restrictions (the same rules as
# the evaluator's `restrictions`, checked below) and the knobs map_elites
# bins by.
LANDSCAPES = {
    "nk": {
        "title": "NK landscape (bench/landscape.lua: N = 10, K = 2, 4^10 points, no restrictions)",
        "evaluator": "bench/landscape.lua",
        "restrictions": None,
        "dims": ["K1", "K2"],
    },
    "gemm": {
        "title": "GEMM space (bench/gemm_space.lua: 14 CLBlast xgemm knobs, Kernel Tuner's restrictions)",
        "evaluator": "bench/gemm_space.lua",
        "restrictions": [
            "KWG % KWI == 0",
            "MWG % (MDIMC * VWM) == 0",
            "NWG % (NDIMC * VWN) == 0",
            "MWG % (MDIMA * VWM) == 0",
            "NWG % (NDIMB * VWN) == 0",
            "(MDIMC * NDIMC) % MDIMA == 0",
            "(MDIMC * NDIMC) % NDIMB == 0",
            "KWG % ((MDIMC * NDIMC) // MDIMA) == 0",
            "KWG % ((MDIMC * NDIMC) // NDIMB) == 0",
            "MDIMC * NDIMC <= 1024",
        ],
        "dims": ["MWG", "NWG"],
    },
}

# avo's strategies with the options the benchmark gives them: their defaults
# (strategies/*.lua headers, docs/benchmarks.md), only enough rounds that
# the budget ends every run, and map_elites' dims (its default names knobs
# of cpu/sgemm).
AVO_STRATEGIES = {
    "random": "samples = 100000",
    "ga": "generations = 100000",
    "islands": "generations = 100000",
    "map_elites": "dims = {DIMS}, iterations = 100000",
    "surrogate": "",
}

# Kernel Tuner's strategies, with their defaults.  bayes_opt is left out on
# the NK landscape only: its acquisition scans the whole space (a million
# configurations) every step.
KT_STRATEGIES = [
    "random_sample", "genetic_algorithm", "firefly_algorithm", "pso",
    "simulated_annealing", "diff_evo", "dual_annealing", "basinhopping",
    "greedy_ils", "greedy_mls", "mls", "bayes_opt",
]
KT_SKIP = {"nk": {"bayes_opt"}}


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------
# The landscape's table, from avo


class Table:
    """Every configuration's score, in mixed-radix order (first knob slowest);
    NaN where the restrictions rule it out."""

    def __init__(self, avo, evaluator, tmp):
        db = os.path.join(tmp, "dump.db")
        out = subprocess.run(
            [avo, "run", "bench/dump_space.lua", "--db", db, f"evaluator={evaluator}"],
            cwd=ROOT, check=True, capture_output=True, text=True).stdout.splitlines()
        self.names, self.values = [], []
        for part in out[0].split()[1:]:
            name, values = part.split("=")
            self.names.append(name)
            self.values.append([int(v) for v in values.split(",")])
        self.optimum = float(out[1].split()[1])
        size = math.prod(len(v) for v in self.values)
        self.scores = np.array([math.nan if s == "-" else float(s) for s in out[2:2 + size]])
        assert len(self.scores) == size, "dump_space: short table"
        self.index_of = [{v: i for i, v in enumerate(vs)} for vs in self.values]
        self.strides = []
        stride = 1
        for vs in reversed(self.values):
            self.strides.insert(0, stride)
            stride *= len(vs)

    def index(self, config):
        return sum(self.index_of[d][v] * self.strides[d] for d, v in enumerate(config))

    def score(self, config):
        return self.scores[self.index(config)]

    def valid_count(self):
        return int(np.count_nonzero(~np.isnan(self.scores)))


class Cache(dict):
    """Kernel Tuner's cache of the landscape: the entry of a configuration
    key "v1,v2,..." is made from the table when asked for (a dict subclass,
    as Kernel Tuner's runner expects)."""

    def __init__(self, table):
        super().__init__()
        self.table = table

    def _config(self, key):
        try:
            config = [int(v) for v in key.split(",")]
            score = self.table.score(config)
        except (KeyError, ValueError, IndexError):
            return None
        return None if math.isnan(score) else (config, score)

    def __contains__(self, key):
        return self._config(key) is not None

    def __getitem__(self, key):
        found = self._config(key)
        if found is None:
            raise KeyError(key)
        config, score = found
        entry = dict(zip(self.table.names, config))
        entry.update(score=score, time=1000.0 / score, times=[1000.0 / score],
                     compile_time=0.0, verification_time=0.0, benchmark_time=0.0)
        return entry

    def get(self, key, default=None):
        return self[key] if key in self else default


# ---------------------------------------------------------------------------
# Kernel Tuner


class KernelTunerRuns:
    """Runs Kernel Tuner's strategies in simulation mode on one landscape."""

    def __init__(self, name, table, restrictions, tmp):
        self.name, self.table = name, table
        self.restrictions = restrictions
        self.tune_params = {n: list(v) for n, v in zip(table.names, table.values)}
        # A cache file with Kernel Tuner's header (device, kernel, knobs) and
        # no entries; its checks run on it, the entries come from Cache.
        self.cachefile = os.path.join(tmp, f"kt_{name}.json")
        header = {"device_name": "avo-landscape", "kernel_name": name, "problem_size": [1],
                  "tune_params_keys": table.names, "tune_params": self.tune_params,
                  "objective": "score", "cache": {}}
        with open(self.cachefile, "w") as f:
            json.dump(header, f, indent="")  # ends "}\n}", as Kernel Tuner writes it
        self.searchspace = Searchspace(self.tune_params, restrictions, 1_000_000_000)
        self.check_space()

    def check_space(self):
        """Kernel Tuner's search space must be the configurations avo allows."""
        size = self.searchspace.size
        valid = self.table.valid_count()
        if size != valid:
            sys.exit(f"vs_kernel_tuner: {self.name}: Kernel Tuner's space has {size} "
                     f"configurations, avo's evaluator allows {valid}")
        for config in self.searchspace.list:
            if math.isnan(self.table.score(config)):
                sys.exit(f"vs_kernel_tuner: {self.name}: Kernel Tuner allows {config}, avo does not")

    def run(self, strategy, budget, seed):
        """Best score / optimum and the count of unique configurations seen."""
        random.seed(seed)
        np.random.seed(seed)
        table, cache = self.table, Cache(self.table)
        real_read_cache = kt_util.read_cache

        def read_cache(cachefile, open_cache=True):
            data = real_read_cache(cachefile, open_cache=False)
            data["cache"] = cache
            return data

        real_searchspace = kt_interface.Searchspace
        kt_util.read_cache = read_cache
        # The space was built (and checked) once; every run gets the same one.
        kt_interface.Searchspace = lambda *a, **k: self.searchspace
        try:
            results, _ = kernel_tuner.tune_kernel(
                self.name, "/* simulated */", 1, [], self.tune_params,
                restrictions=self.restrictions, cache=self.cachefile, simulation_mode=True,
                strategy=strategy, strategy_options={"max_fevals": budget},
                objective="score", objective_higher_is_better=True, quiet=True,
                verbose=False, block_size_names=["avo_unused_x", "avo_unused_y", "avo_unused_z"])
        finally:
            kt_util.read_cache = real_read_cache
            kt_interface.Searchspace = real_searchspace
        seen, best = set(), -math.inf
        for r in results:
            if not r or "__error__" in r:
                continue
            config = tuple(r[n] for n in table.names)
            seen.add(config)
            best = max(best, float(r["score"]))
        if len(seen) > budget:
            sys.exit(f"vs_kernel_tuner: Kernel Tuner {strategy} saw {len(seen)} configurations "
                     f"with max_fevals {budget}")
        return best / table.optimum, len(seen)


# ---------------------------------------------------------------------------
# avo


def avo_run(avo, landscape, strategy, budget, seed, tmp):
    """Best score / optimum of one avo run and its count of evaluations."""
    spec = LANDSCAPES[landscape]
    opts = AVO_STRATEGIES[strategy].replace(
        "{DIMS}", "{ " + ", ".join(f"'{d}'" for d in spec["dims"]) + " }")
    script = os.path.join(tmp, f"{landscape}_{strategy}.lua")
    with open(script, "w") as f:
        f.write('local avo = require "avo"\n'
                f'return avo.strategy("{strategy}").run{{ evaluator = "{spec["evaluator"]}"'
                + (f", {opts}" if opts else "") + " }\n")
    db = os.path.join(tmp, f"{landscape}_{strategy}_{budget}_{seed}.db")
    proc = subprocess.run([avo, "run", script, "--db", db, "--seed", str(seed), "--jobs", "1",
                           "--max-evals", str(budget)], cwd=ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"vs_kernel_tuner: avo {strategy} on {landscape} (seed {seed}) failed:\n"
                 + proc.stderr[-2000:])
    with sqlite3.connect(db) as con:
        best, n = con.execute("SELECT max(CASE WHEN status = 'ok' THEN score END), count(*) "
                              "FROM candidates").fetchone()
    os.unlink(db)
    if n > budget:
        sys.exit(f"vs_kernel_tuner: avo {strategy} evaluated {n} > {budget} candidates")
    return best, n


# ---------------------------------------------------------------------------
# Statistics


def mann_whitney_greater(x, y):
    """One-sided Mann-Whitney U test that x tends to exceed y: (U of x, p).
    scipy's exact/asymptotic test when scipy is there, else the normal
    approximation with tie correction."""
    try:
        from scipy.stats import mannwhitneyu
        res = mannwhitneyu(x, y, alternative="greater")
        return float(res.statistic), float(res.pvalue)
    except ImportError:
        pass
    pooled = sorted((v, i) for i, v in enumerate(list(x) + list(y)))
    ranks = [0.0] * len(pooled)
    i, ties = 0, 0.0
    while i < len(pooled):
        j = i
        while j + 1 < len(pooled) and pooled[j + 1][0] == pooled[i][0]:
            j += 1
        for k in range(i, j + 1):
            ranks[pooled[k][1]] = (i + j) / 2 + 1
        t = j - i + 1
        ties += t ** 3 - t
        i = j + 1
    n1, n2 = len(x), len(y)
    u = sum(ranks[:n1]) - n1 * (n1 + 1) / 2
    n = n1 + n2
    sigma = math.sqrt(n1 * n2 / 12 * ((n + 1) - ties / (n * (n - 1))))
    if sigma == 0:
        return u, 1.0
    z = (u - n1 * n2 / 2 - 0.5) / sigma
    return u, 0.5 * math.erfc(z / math.sqrt(2))


def summary(values):
    q = statistics.quantiles(values, n=4, method="inclusive") if len(values) > 1 else values * 3
    return statistics.median(values), q[0], q[2], min(values), max(values)


# ---------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("avo", help="path of the avo binary")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--budgets", default="50,150", help="unique evaluations, comma-separated")
    ap.add_argument("--landscapes", default="nk,gemm")
    ap.add_argument("--avo-strategies", default=",".join(AVO_STRATEGIES))
    ap.add_argument("--kt-strategies", default=",".join(KT_STRATEGIES))
    ap.add_argument("--results", help="JSON lines file of every strategy's results, appended as "
                    "they come; rows already there are not run again (resume, or runs split "
                    "over several calls), and the report covers all rows of the run's landscapes "
                    "and budgets")
    args = ap.parse_args()
    avo = os.path.abspath(args.avo)
    budgets = [int(b) for b in args.budgets.split(",")]
    seeds = list(range(1, args.seeds + 1))
    done = {}
    if args.results and os.path.exists(args.results):
        with open(args.results) as f:
            for line in f:
                row = json.loads(line)
                if row["seeds"] == seeds:
                    done[(row["landscape"], row["budget"], row["tool"], row["strategy"])] = row["best_over_optimum"]

    def record(landscape, budget, tool, strategy, values):
        done[(landscape, budget, tool, strategy)] = values
        if args.results:
            with open(args.results, "a") as f:
                f.write(json.dumps({"landscape": landscape, "budget": budget, "tool": tool,
                                    "strategy": strategy, "seeds": seeds,
                                    "best_over_optimum": values}) + "\n")

    print(f"avo vs Kernel Tuner {kernel_tuner.__version__} (simulation mode), {len(seeds)} seeds, "
          f"budgets {budgets} unique evaluations; best found / optimum")
    with tempfile.TemporaryDirectory() as tmp:
        for landscape in args.landscapes.split(","):
            spec = LANDSCAPES[landscape]
            table = kt = None

            def table_of():
                # Made when a run needs it (a report of stored rows does not).
                nonlocal table
                if table is None:
                    started = time.time()
                    table = Table(avo, spec["evaluator"], tmp)
                    log(f"{landscape}: {len(table.scores)} configurations, {table.valid_count()} "
                        f"valid, optimum {table.optimum:.6g} ({time.time() - started:.0f} s)")
                return table

            for budget in budgets:
                for s in filter(None, args.avo_strategies.split(",")):
                    if (landscape, budget, "avo", s) in done:
                        continue
                    t = time.time()
                    record(landscape, budget, "avo", s,
                           [avo_run(avo, landscape, s, budget, seed, tmp)[0] / table_of().optimum
                            for seed in seeds])
                    log(f"  {budget} avo {s}: {time.time() - t:.0f} s")
                for s in filter(None, args.kt_strategies.split(",")):
                    if s in KT_SKIP.get(landscape, ()) or (landscape, budget, "kernel_tuner", s) in done:
                        continue
                    if kt is None:
                        kt = KernelTunerRuns(landscape, table_of(), spec["restrictions"], tmp)
                    t = time.time()
                    record(landscape, budget, "kernel_tuner", s,
                           [kt.run(s, budget, seed)[0] for seed in seeds])
                    log(f"  {budget} kernel_tuner {s}: {time.time() - t:.0f} s")
                results = {(tool, s): v for (ls, b, tool, s), v in done.items()
                           if ls == landscape and b == budget}
                report(spec["title"], budget, results)


def report(title, budget, results):
    print(f"\n{title}, {budget} unique evaluations")
    print(f"{'tool':<13} {'strategy':<20} {'median':>7} {'q1':>7} {'q3':>7} {'min':>7} {'max':>7}")
    best = {}
    if not results:
        return
    for (tool, s), values in sorted(results.items(), key=lambda kv: -statistics.median(kv[1])):
        med, q1, q3, lo, hi = summary(values)
        print(f"{tool:<13} {s:<20} {med:7.4f} {q1:7.4f} {q3:7.4f} {lo:7.4f} {hi:7.4f}")
        if tool not in best:
            best[tool] = s
    if len(best) < 2:
        return
    a, k = results[("avo", best["avo"])], results[("kernel_tuner", best["kernel_tuner"])]
    u, p = mann_whitney_greater(a, k)
    ahead = statistics.median(a) > statistics.median(k)
    print(f"best of each: avo {best['avo']} {statistics.median(a):.4f} vs Kernel Tuner "
          f"{best['kernel_tuner']} {statistics.median(k):.4f}: avo {'ahead' if ahead else 'NOT ahead'}; "
          f"Mann-Whitney U = {u:.1f}, one-sided p = {p:.3g}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
