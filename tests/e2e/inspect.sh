#!/bin/sh
# `avo runs` and `avo diff` on an archive of two runs: a GA run (crossover
# children with two parents) and the operator test (candidates whose sources
# differ), and every mistake a user can make with them.
. "$(dirname "$0")/lib.sh"
db="$tmp/a.db"
expect_exit 0 "$AVO" run tests/lua/ga_synthetic.lua --db "$db" --jobs 2
expect_exit 0 "$AVO" run tests/lua/test_operators.lua --db "$db" --jobs 2

# runs: one line per run with counts, best and budgets
expect_exit 0 "$AVO" runs --db "$db"
expect_in "$tmp/out" "tests/lua/ga_synthetic.lua"
expect_in "$tmp/out" "tests/lua/test_operators.lua"
best1=$(q "$db" "SELECT id FROM candidates WHERE run_id = 1 AND status = 'ok' ORDER BY score DESC, id LIMIT 1")
expect_in "$tmp/out" "#$best1 "
expect_in "$tmp/out" "jobs 2"
expect_exit 0 "$AVO" runs --db "$db" --json
python3 - "$tmp/out" "$db" <<'PY'
import json, sqlite3, sys
runs = json.load(open(sys.argv[1]))
db = sqlite3.connect(sys.argv[2])
assert [r["id"] for r in runs] == [1, 2], runs
for r in runs:
    n, ok = db.execute("SELECT count(*), sum(status = 'ok') FROM candidates WHERE run_id = ?", (r["id"],)).fetchone()
    assert (r["candidates"], r["ok"], r["failed"]) == (n, ok, n - ok), r
    best = db.execute("SELECT id, score FROM candidates WHERE run_id = ? AND status = 'ok' ORDER BY score DESC, id LIMIT 1", (r["id"],)).fetchone()
    assert (r["best_id"], r["best_score"]) == best, (r, best)
    assert r["config"]["jobs"] == 2 and r["status"] == "done" and r["seed"] == 1
PY

# diff: two candidates with different sources (left and right edits of the seed)
left=$(q "$db" "SELECT c.id FROM candidates c JOIN sources s ON s.hash = c.source_hash WHERE c.run_id = 2 AND c.operator = 'manual' AND s.text LIKE '%/* left edit */%' ORDER BY c.id LIMIT 1")
right=$((left + 1))
expect_exit 0 "$AVO" diff "$left" "$right" --db "$db"
expect_in "$tmp/out" "diff #$left -> #$right"
expect_in "$tmp/out" "--- a/kernel.c"
expect_in "$tmp/out" "+++ b/kernel.c"
expect_in "$tmp/out" "+/* right edit */"
expect_in "$tmp/out" "-/* left edit */"
expect_in "$tmp/out" "GFLOP/s"
# knob changes and per-config ratios, checked against the archive
seed=$(q "$db" "SELECT min(id) FROM candidates WHERE run_id = 1")
expect_exit 0 "$AVO" diff "$seed" "#$best1" --db "$db"
expect_in "$tmp/out" "source: identical"
expect_in "$tmp/out" " -> "
expect_exit 0 "$AVO" diff "$seed" "$best1" --db "$db" --json
python3 - "$tmp/out" "$db" "$seed" "$best1" <<'PY'
import json, sqlite3, sys
d = json.load(open(sys.argv[1]))
db = sqlite3.connect(sys.argv[2])
a, b = int(sys.argv[3]), int(sys.argv[4])
ka = json.loads(db.execute("SELECT knobs FROM candidates WHERE id = ?", (a,)).fetchone()[0])
kb = json.loads(db.execute("SELECT knobs FROM candidates WHERE id = ?", (b,)).fetchone()[0])
changed = {k for k in set(ka) | set(kb) if str(ka.get(k)) != str(kb.get(k))}
assert {k["name"] for k in d["knobs"]} == changed, (d["knobs"], changed)
for c in d["configs"]:
    ga = db.execute("SELECT gflops FROM evaluations WHERE candidate_id = ? AND config = ?", (a, c["name"])).fetchone()[0]
    gb = db.execute("SELECT gflops FROM evaluations WHERE candidate_id = ? AND config = ?", (b, c["name"])).fetchone()[0]
    assert abs(c["ratio"] - gb / ga) < 1e-9 and c["unit"] == "GFLOP/s", c
sa, sb = [db.execute("SELECT score FROM candidates WHERE id = ?", (i,)).fetchone()[0] for i in (a, b)]
assert abs(d["score"]["delta"] - (sb - sa)) < 1e-9 and d["source_diff"] == ""
PY

# mistakes
expect_exit 1 "$AVO" diff 1 99999 --db "$db";   expect_in "$tmp/err" "no candidate #99999"
expect_exit 1 "$AVO" diff 99998 1 --db "$db";   expect_in "$tmp/err" "no candidate #99998"
expect_exit 2 "$AVO" diff 1 --db "$db";         expect_in "$tmp/err" "expected two candidate ids"
expect_exit 2 "$AVO" diff 1 x --db "$db";       expect_in "$tmp/err" "positive integer, got 'x'"
expect_exit 1 "$AVO" diff 1 2 --db "$tmp/none.db"; expect_in "$tmp/err" "cannot open archive"
[ ! -e "$tmp/none.db" ] || fail "diff created a missing archive"
expect_exit 1 "$AVO" runs --db "$tmp/none.db";  expect_in "$tmp/err" "cannot open archive"
expect_exit 2 "$AVO" runs extra --db "$db";     expect_in "$tmp/err" "unexpected argument 'extra'"
expect_exit 0 "$AVO" runs --help;               expect_in "$tmp/out" "usage: avo runs"
expect_exit 0 "$AVO" diff --help;               expect_in "$tmp/out" "usage: avo diff"
echo "inspect: ok"
