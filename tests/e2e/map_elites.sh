#!/bin/sh
# strategies/map_elites.lua on the deterministic test backend: same seed, same
# lineage (different seed, different lineage); the final map holds the best
# candidate of every cell the run reached; bad options name the option; a
# run killed with kill -9 resumes to the lineage and maps of the run left alone.
. "$(dirname "$0")/lib.sh"
script=tests/lua/map_elites_synthetic.lua

lineage() {
    q "$1" "SELECT c.id, c.operator, c.knobs, c.source_hash, c.status, c.score,
                   (SELECT group_concat(parent || ':' || role, ',') FROM
                      (SELECT parent, role FROM edges WHERE child = c.id ORDER BY parent, role))
            FROM candidates c ORDER BY c.id"
}
maps() { q "$1" "SELECT data FROM events WHERE kind = 'map_elites' ORDER BY id"; }

# Determinism.
expect_exit 0 "$AVO" run "$script" --db "$tmp/a.db" --seed 7 --jobs 2
expect_in "$tmp/err" "map_elites: batch 6: coverage"
expect_exit 0 "$AVO" run "$script" --db "$tmp/b.db" --seed 7 --jobs 1
expect_exit 0 "$AVO" run "$script" --db "$tmp/c.db" --seed 8 --jobs 2
lineage "$tmp/a.db" > "$tmp/a.txt"
lineage "$tmp/b.db" > "$tmp/b.txt"
lineage "$tmp/c.db" > "$tmp/c.txt"
[ "$(wc -l < "$tmp/a.txt")" -ge 30 ] || fail "expected a few batches of candidates"
cmp -s "$tmp/a.txt" "$tmp/b.txt" || { diff "$tmp/a.txt" "$tmp/b.txt" | head; fail "same seed, different lineage"; }
cmp -s "$tmp/a.txt" "$tmp/c.txt" && fail "different seeds gave the same lineage"
[ "$(q "$tmp/a.db" "SELECT count(*) FROM events WHERE kind = 'map_elites'")" = 7 ] ||
    fail "expected one map_elites event per batch (0..6)"

# The last map: coverage > 1 cell, and each elite is the best verified
# candidate of its cell (ties: the earliest), every reached cell is in it.
for db in "$tmp/a.db" "$tmp/c.db"; do
    python3 - "$db" kernels/cpu/sgemm.c <<'PY' || fail "map check failed for $db"
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
domain = {}
for line in open(sys.argv[2]):
    if line.startswith("// avo:param "):
        name, *values = line.split()[2:]
        domain[name] = values
m = json.loads(db.execute("SELECT data FROM events WHERE kind = 'map_elites' "
                          "ORDER BY id DESC LIMIT 1").fetchone()[0])
dims = m["dims"]
assert dims == ["TILE", "ORDER"], dims
assert m["bins"] == [len(domain[d]) for d in dims], m["bins"]
assert m["cells"] == 15 and m["occupied"] == len(m["elites"]) > 1, m
best = {}  # cell -> (score, id) of the best verified candidate, earliest on ties
for cid, knobs, score in db.execute(
        "SELECT id, knobs, score FROM candidates WHERE status = 'ok' ORDER BY id"):
    knobs = json.loads(knobs)
    cell = tuple(domain[d].index(str(knobs.get(d, domain[d][0]))) + 1 for d in dims)
    if cell not in best or score > best[cell][0]:
        best[cell] = (score, cid)
elites = {tuple(e["cell"]): e for e in m["elites"]}
assert set(elites) == set(best), (sorted(elites), sorted(best))
for cell, (score, cid) in best.items():
    e = elites[cell]
    assert e["id"] == cid and abs(e["score"] - score) <= 1e-12 * abs(score), (cell, e, cid, score)
    assert e["values"] == [int(domain[d][i - 1]) for d, i in zip(dims, cell)], e
assert abs(m["qd_score"] - sum(s for s, _ in best.values())) < 1e-9, m["qd_score"]
top = db.execute("SELECT id FROM candidates WHERE status = 'ok' "
                 "ORDER BY score DESC, id LIMIT 1").fetchone()[0]
assert m["best"] == top, (m["best"], top)
PY
done

# Parents: the better elite of `tournament` occupied cells.  With a
# tournament far larger than the map every parent of batch 1 is the best
# record of batch 0 (seed and initial samples); with tournament = 1 (uniform,
# classic MAP-Elites) the parents are spread over the cells.
tour() { # NAME TOURNAMENT
    printf 'local avo = require "avo"\nreturn avo.strategy("map_elites").run{ evaluator = "%s",\n  dims = { "TILE", "ORDER" }, initial = 8, batch = 8, iterations = 1, crossover_rate = 0,\n  tournament = %s }\n' \
        tests/lua/evaluators/synthetic.lua "$2" > "$tmp/$1.lua"
    expect_exit 0 "$AVO" run "$tmp/$1.lua" --db "$tmp/$1.db" --seed 4
}
parents_of_batch1() {
    q "$1" "SELECT DISTINCT e.parent FROM edges e JOIN candidates c ON c.id = e.child
            WHERE c.id > (SELECT max(id) FROM candidates WHERE generation = 0 OR operator = 'seed')
            ORDER BY 1"
}
tour t_all 1000
best0=$(q "$tmp/t_all.db" "SELECT id FROM candidates WHERE status = 'ok' AND id <= 9
                           ORDER BY score DESC, id LIMIT 1")
[ "$(parents_of_batch1 "$tmp/t_all.db")" = "$best0" ] ||
    fail "tournament 1000: expected every parent to be #$best0, got $(parents_of_batch1 "$tmp/t_all.db" | tr '\n' ' ')"
tour t_one 1
[ "$(parents_of_batch1 "$tmp/t_one.db" | wc -l)" -ge 2 ] || fail "tournament 1: parents from one cell only"

# Bad options name the option, at the CLI too.
expect_exit 0 "$AVO" run tests/e2e/map_elites_options.lua --db "$tmp/o.db"
expect_in "$tmp/out" "map_elites options: ok"
printf 'local avo = require "avo"\nreturn avo.strategy("map_elites").run{ evaluator = "%s",\n  dims = { "TILE", "WARPS" } }\n' \
    tests/lua/evaluators/synthetic.lua > "$tmp/bad.lua"
expect_exit 1 "$AVO" run "$tmp/bad.lua" --db "$tmp/bad.db"
expect_in "$tmp/err" "map_elites: option 'dims' must be knob names of the seed kernel"
expect_in "$tmp/err" "got WARPS"

# Resume after kill -9: nothing finished is repeated, and the lineage and the
# maps are those of the run left alone.
export AVO_TEST_SLOW_MS=25
seed=5
expect_exit 0 "$AVO" run "$script" --db "$tmp/full.db" --seed "$seed"
lineage "$tmp/full.db" > "$tmp/full.txt"
maps "$tmp/full.db" > "$tmp/full_maps.txt"
for delay in 0.4 1.2; do
    db="$tmp/k$delay.db"
    "$AVO" run "$script" --db "$db" --seed "$seed" >/dev/null 2>&1 &
    pid=$!
    sleep "$delay"
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    [ "$(q "$db" "PRAGMA integrity_check")" = ok ] || fail "integrity_check"
    [ "$(q "$db" "SELECT status FROM runs")" = running ] || fail "run finished before the kill at $delay s"
    q "$db" "SELECT id, evaluated_at FROM candidates WHERE status <> 'pending' ORDER BY id" > "$tmp/before.txt"
    expect_exit 0 "$AVO" resume --db "$db"
    expect_in "$tmp/err" "resuming run 1"
    q "$db" "SELECT id, evaluated_at FROM candidates WHERE status <> 'pending' ORDER BY id" |
        head -n "$(wc -l < "$tmp/before.txt")" > "$tmp/after.txt"
    cmp -s "$tmp/before.txt" "$tmp/after.txt" || fail "a finished evaluation was repeated (kill at $delay s)"
    lineage "$db" > "$tmp/resumed.txt"
    cmp -s "$tmp/full.txt" "$tmp/resumed.txt" || {
        diff "$tmp/full.txt" "$tmp/resumed.txt" | head -5
        fail "resumed lineage differs from the uninterrupted run (kill at $delay s)"
    }
    maps "$db" > "$tmp/resumed_maps.txt"
    cmp -s "$tmp/full_maps.txt" "$tmp/resumed_maps.txt" || fail "resumed maps differ (kill at $delay s)"
    [ "$(q "$db" "SELECT status FROM runs")" = done ] || fail "resumed run not done"
done
echo "map_elites: ok"
