"""Recompute an experiment report's numbers from the archive, independently
of avo (tests/e2e/experiment.sh): python3 check_report.py DB REPORT.json
Checks every cell's best score (re-timed: the #1 median of its run's last
"retimed" or "rebenched" event, with its paired ratios, when the run's
figures are paired), each group's figure (re-timed when every finished cell
of it re-timed, else recorded), each arm's n, median and quartiles of those
figures, its recorded median and paired medians, that the bootstrap
interval holds the median and lies within the data, every pair's
Mann-Whitney U, A12 and p-value (exact by enumerating the arrangements when
there are no ties, normal approximation otherwise) and Holm's adjustment."""
import itertools
import json
import math
import sqlite3
import statistics
import sys

db, report = sys.argv[1], sys.argv[2]
rep = json.load(open(report))
con = sqlite3.connect(db)
exp_id = rep["experiment"]["id"]
plan = json.loads(con.execute("SELECT plan FROM experiments WHERE id = ?", (exp_id,)).fetchone()[0])
runs = {}
for rid, status, config in con.execute("SELECT id, status, config FROM runs ORDER BY id"):
    args = json.loads(config).get("args", {})
    if args.get("avo_experiment") == str(exp_id) and "avo_cell" in args:
        runs[args["avo_cell"]] = (rid, status)
close = lambda a, b: a is not None and b is not None and abs(a - b) <= 1e-9 * max(1, abs(a), abs(b))
errors = []
cells = {c["key"]: c for c in rep["cells"]}
assert len(cells) == len(plan), (len(cells), len(plan))
best = {}
retimed = {}
for p in plan:
    key = p["key"]
    c = cells[key]
    if key not in runs:
        if c["state"] not in ("missing", "failed"):
            errors.append(f"{key}: no run but state {c['state']}")
        continue
    rid, status = runs[key]
    b = con.execute("SELECT max(score) FROM candidates WHERE run_id = ? AND status = 'ok'",
                    (rid,)).fetchone()[0]
    want = {"done": "finished", "stopped": "finished", "failed": "failed"}.get(status, "unfinished")
    rec = con.execute("SELECT status, run_id FROM experiment_cells WHERE experiment_id = ? AND cell = ?",
                      (exp_id, key)).fetchone()
    if want == "finished" and rec and rec[0] == "failed" and rec[1] == rid:
        want = "failed"  # stopped on an error: the runner recorded the failure
    if want == "finished" and b is None:
        want = "no verified candidate"
    if c["state"] != want:
        errors.append(f"{key}: state {c['state']}, archive says {want}")
    if c["run_id"] != rid:
        errors.append(f"{key}: run {c['run_id']}, archive {rid}")
    if want == "finished":
        if not close(c["best"], b):
            errors.append(f"{key}: best {c['best']}, archive {b}")
        best[key] = b
        row = con.execute("SELECT data FROM events WHERE run_id = ? AND kind IN ('retimed', 'rebenched') "
                          "ORDER BY id DESC LIMIT 1", (rid,)).fetchone()
        data = json.loads(row[0]) if row and row[0] else {}
        top = (data.get("ranked") or [None])[0] if data.get("paired") else None
        got = c.get("retimed")
        if top is None:
            if got is not None:
                errors.append(f"{key}: re-timed {got}, but the run's figures are not paired")
        else:
            ratios = {p["against"]: p["median"] for p in top["paired"]}
            if (data.get("seed") or {}).get("id") == top["id"]:
                ratios["seed"] = 1.0  # the seed is the best: its ratio to itself
            retimed[key] = (top["median"], ratios)
            if got is None or got["id"] != top["id"] or not close(got["score"], top["median"]):
                errors.append(f"{key}: re-timed {got}, archive #{top['id']} {top['median']}")


def exact_p(a, b, u):
    pooled = a + b
    n1 = len(a)
    us = []
    for idx in itertools.combinations(range(len(pooled)), n1):
        xa = [pooled[i] for i in idx]
        xb = [pooled[i] for i in range(len(pooled)) if i not in idx]
        us.append(sum((x > y) + 0.5 * (x == y) for x in xa for y in xb))
    lo = sum(1 for v in us if v <= u) / len(us)
    hi = sum(1 for v in us if v >= u) / len(us)
    return min(1.0, 2 * min(lo, hi))


def normal_p(a, b, u):
    n1, n2 = len(a), len(b)
    n = n1 + n2
    counts = {}
    for v in a + b:
        counts[v] = counts.get(v, 0) + 1
    tie = sum(t ** 3 - t for t in counts.values())
    var = n1 * n2 / 12 * ((n + 1) - tie / (n * (n - 1)))
    if var <= 0:
        return 1.0
    z = max(0.0, abs(u - n1 * n2 / 2) - 0.5) / math.sqrt(var)
    return min(1.0, math.erfc(z / math.sqrt(2)))


checked = 0
for g in rep["groups"]:
    values = {}
    group_keys = [p["key"] for p in plan if p["workload"] == g["workload"] and p["budget"] == g["budget"]
                  and p["key"] in best]
    figure = None
    if group_keys:
        figure = "retimed" if all(k in retimed for k in group_keys) else "recorded"
    if g.get("figure") != figure:
        errors.append(f"{g['workload']}/{g['budget']}: figure {g.get('figure')}, archive says {figure}")
    for arm in g["arms"]:
        keys = [p["key"] for p in plan if p["workload"] == g["workload"] and p["budget"] == g["budget"]
                and p["arm"] == arm["arm"]]
        finished = [k for k in keys if k in best]
        if figure == "retimed":
            v = sorted(retimed[k][0] for k in finished)
            by = {}
            for k in finished:
                for name, m in retimed[k][1].items():
                    by.setdefault(name, []).append(m)
            got = {p["against"]: p for p in arm.get("paired") or []}
            if set(got) != set(by):
                errors.append(f"{arm['arm']}: paired against {sorted(got)}, archive {sorted(by)}")
            for name, ms in by.items():
                if name in got and not close(got[name]["median"], statistics.median(ms)):
                    errors.append(f"{arm['arm']} x {name}: {got[name]['median']}, want {statistics.median(ms)}")
        else:
            v = sorted(best[k] for k in finished)
            if arm.get("paired"):
                errors.append(f"{arm['arm']}: paired ratios in a group of recorded figures")
        rec = [best[k] for k in finished]
        if rec and not close((arm.get("recorded") or {}).get("median"), statistics.median(rec)):
            errors.append(f"{arm['arm']}: recorded median {arm.get('recorded')}, want {statistics.median(rec)}")
        values[arm["arm"]] = v
        if arm["n"] != len(v) or arm["planned"] != len(keys):
            errors.append(f"{g['workload']}/{g['budget']}/{arm['arm']}: n {arm['n']}/{arm['planned']},"
                          f" archive {len(v)}/{len(keys)}")
            continue
        if not v:
            continue
        q = statistics.quantiles(v, n=4, method="inclusive") if len(v) > 1 else [v[0]] * 3
        for name, want in (("median", statistics.median(v)), ("q1", q[0]), ("q3", q[2]),
                           ("min", v[0]), ("max", v[-1])):
            if not close(arm[name], want):
                errors.append(f"{arm['arm']} {name}: {arm[name]} vs {want}")
        if not (v[0] - 1e-12 <= arm["ci_low"] <= arm["median"] + 1e-12 <= arm["ci_high"] + 2e-12
                and arm["ci_high"] <= v[-1] + 1e-12):
            errors.append(f"{arm['arm']}: CI [{arm['ci_low']}, {arm['ci_high']}] vs data {v}")
        checked += 1
    tests = g["tests"]
    for t in tests:
        a, b = values[t["a"]], values[t["b"]]
        u = sum((x > y) + 0.5 * (x == y) for x in a for y in b)
        ties = len(set(a + b)) < len(a + b)
        p = normal_p(a, b, u) if ties or len(a) + len(b) > 60 else exact_p(a, b, u)
        if not close(t["u"], u) or not close(t["a12"], u / (len(a) * len(b))):
            errors.append(f"{t['a']} vs {t['b']}: U {t['u']} A12 {t['a12']}, want {u}")
        if abs(t["p"] - p) > 1e-6:
            errors.append(f"{t['a']} vs {t['b']}: p {t['p']}, want {p}")
    order = sorted(range(len(tests)), key=lambda i: tests[i]["p"])
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(tests) - rank) * tests[i]["p"]))
        if abs(tests[i]["p_holm"] - running) > 1e-9:
            errors.append(f"holm {tests[i]['a']} vs {tests[i]['b']}: {tests[i]['p_holm']} vs {running}")
if errors:
    print("\n".join(errors))
    sys.exit(1)
print(f"report matches the archive: {len(plan)} cells, {checked} arm summaries")
