#!/bin/sh
# `avo export` as CSV, JSON and git on an archive of two runs (a GA run with
# crossover children, the operator test with differing sources): each
# format round-trips against the archive itself, and mistakes are refused.
. "$(dirname "$0")/lib.sh"
db="$tmp/a.db"
expect_exit 0 "$AVO" run tests/lua/ga_synthetic.lua --db "$db" --jobs 2
expect_exit 0 "$AVO" run tests/lua/test_operators.lua --db "$db" --jobs 2
# A failed candidate (no configs) whose reason needs CSV quoting.
q "$db" "UPDATE candidates SET status = 'compile_error', score = 0, reason = 'error: a, \"b\"' || char(10) || 'line 2' WHERE id = 3; DELETE FROM evaluations WHERE candidate_id = 3"

# CSV: the same candidates and per-config numbers as the archive
expect_exit 0 "$AVO" export --db "$db" --csv "$tmp/all.csv"
expect_in "$tmp/err" "wrote $tmp/all.csv"
cat > "$tmp/check_csv.py" <<'PY'
import csv, json, sqlite3, sys
path, dbpath, run = sys.argv[1], sys.argv[2], int(sys.argv[3])
db = sqlite3.connect(dbpath)
with open(path, newline="") as f:
    rows = list(csv.DictReader(f))
where = "WHERE run_id = %d" % run if run else ""
cands = db.execute("SELECT id, run_id, generation, operator, status, reason, score, knobs, note,"
                   " source_hash FROM candidates %s ORDER BY id" % where).fetchall()
assert sorted({int(r["id"]) for r in rows}) == [c[0] for c in cands]
for (cid, run_id, gen, op, status, reason, score, knobs, note, src) in cands:
    mine = [r for r in rows if int(r["id"]) == cid]
    evals = db.execute("SELECT config, correct, max_error, median_s, spread, samples, gflops, gbs"
                       " FROM evaluations WHERE candidate_id = ? ORDER BY rowid", (cid,)).fetchall()
    assert len(mine) == max(len(evals), 1), (cid, len(mine), len(evals))
    for r in mine:
        assert (int(r["run_id"]), int(r["generation"]), r["operator"], r["status"]) == (run_id, gen, op, status)
        assert r["reason"] == (reason or "") and r["note"] == (note or "") and r["source_hash"] == src
        assert float(r["score"]) == score and json.loads(r["knobs"]) == json.loads(knobs)
        edges = db.execute("SELECT parent, role FROM edges WHERE child = ? ORDER BY role, parent", (cid,)).fetchall()
        assert r["parents"] == ";".join("%d:%s" % e for e in edges), (r["parents"], edges)
    if not evals:
        assert mine[0]["config"] == "" and mine[0]["gflops"] == ""
    for r, e in zip(mine, evals):
        num = lambda s: None if s == "" else float(s)
        assert r["config"] == e[0] and int(r["correct"]) == e[1]
        assert (num(r["max_error"]), num(r["median_s"]), num(r["spread"])) == tuple(e[2:5]), (r, e)
        assert (num(r["samples"]), num(r["gflops"]), num(r["gbs"])) == tuple(e[5:8]), (r, e)
print("csv rows:", len(rows))
PY
python3 "$tmp/check_csv.py" "$tmp/all.csv" "$db" 0
grep -q '"error: a, ""b""' "$tmp/all.csv" || fail "reason not quoted per RFC 4180"
expect_exit 0 "$AVO" export --db "$db" --run 2 --csv "$tmp/run2.csv"
python3 "$tmp/check_csv.py" "$tmp/run2.csv" "$db" 2
expect_exit 0 "$AVO" export --db "$db" --run 2 --csv -
expect_in "$tmp/out" "id,run_id,generation,operator"

# JSON: runs and full candidates with sources
expect_exit 0 "$AVO" export --db "$db" --json "$tmp/all.json"
python3 - "$tmp/all.json" "$db" <<'PY'
import json, sqlite3, sys
doc = json.load(open(sys.argv[1]))
db = sqlite3.connect(sys.argv[2])
assert [r["id"] for r in doc["runs"]] == [1, 2]
ids = [c[0] for c in db.execute("SELECT id FROM candidates ORDER BY id")]
assert [c["id"] for c in doc["candidates"]] == ids
for c in doc["candidates"]:
    src = db.execute("SELECT text FROM sources WHERE hash = ?", (c["source_hash"],)).fetchone()[0]
    assert c["source"] == src
    n = db.execute("SELECT count(*) FROM evaluations WHERE candidate_id = ?", (c["id"],)).fetchone()[0]
    assert len(c["configs"]) == n
    for cfg in c["configs"]:
        g = db.execute("SELECT gflops FROM evaluations WHERE candidate_id = ? AND config = ?", (c["id"], cfg["name"])).fetchone()[0]
        assert cfg["gflops"] == g
PY

# git: one commit per candidate, merge commits for two-parent children
expect_exit 0 "$AVO" export --db "$db" --git "$tmp/lineage"
expect_in "$tmp/err" "exported"
g() { git -C "$tmp/lineage" "$@"; }
n=$(q "$db" "SELECT count(*) FROM candidates")
[ "$(g rev-list --all --count)" = "$n" ] || fail "expected $n commits, got $(g rev-list --all --count)"
merges=$(q "$db" "SELECT count(*) FROM (SELECT child FROM edges GROUP BY child HAVING count(DISTINCT parent) = 2)")
[ "$merges" -gt 0 ] || fail "the GA run made no crossover children"
[ "$(g rev-list --all --merges --count)" = "$merges" ] || fail "expected $merges merge commits"
[ "$(g tag | wc -l)" = "$n" ] || fail "expected a tag per candidate"
best=$(q "$db" "SELECT id FROM candidates WHERE status = 'ok' ORDER BY score DESC, id LIMIT 1")
[ "$(g rev-parse best)" = "$(g rev-parse "c$best")" ] || fail "branch best is not c$best"
last=$(q "$db" "SELECT max(id) FROM candidates")
[ "$(g rev-parse HEAD)" = "$(g rev-parse "c$last")" ] || fail "HEAD is not the last candidate"
[ -z "$(g status --porcelain)" ] || fail "the export's work tree is not clean"
g log --graph --oneline --all > "$tmp/graph"
expect_in "$tmp/graph" "crossover"
g show -s --format=%B "c$best" > "$tmp/msg"
expect_in "$tmp/msg" "#$best "
expect_in "$tmp/msg" "status: ok"
expect_in "$tmp/msg" "small: correct"
created=$(q "$db" "SELECT CAST(created_at AS INTEGER) FROM candidates WHERE id = $best")
[ "$(g show -s --format=%at "c$best")" = "$created" ] || fail "author time is not created_at"
# two candidates with different sources: git diff shows the edit
left=$(q "$db" "SELECT c.id FROM candidates c JOIN sources s ON s.hash = c.source_hash WHERE c.run_id = 2 AND c.operator = 'manual' AND s.text LIKE '%/* left edit */%' ORDER BY c.id LIMIT 1")
g diff "c$left" "c$((left + 1))" -- kernel.c > "$tmp/gdiff"
expect_in "$tmp/gdiff" "+/* right edit */"
g show "c$left:knobs.json" | python3 -c 'import json,sys; json.load(sys.stdin)'
g show "c$left:scores.json" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["configs"]'
[ "$(g show "c$left:kernel.c" | git hash-object --stdin)" = "$(q "$db" "SELECT source_hash FROM candidates WHERE id = $left")" ] || fail "kernel.c is not the archived source"
# --run exports that run only
expect_exit 0 "$AVO" export --db "$db" --run 2 --git "$tmp/run2"
[ "$(git -C "$tmp/run2" rev-list --all --count)" = "$(q "$db" "SELECT count(*) FROM candidates WHERE run_id = 2")" ] || fail "--run 2 git export"

# mistakes
expect_exit 1 "$AVO" export --db "$db" --git "$tmp/lineage";   expect_in "$tmp/err" "exists and is not empty"
expect_exit 1 "$AVO" export --db "$db" --git "$tmp/all.csv";   expect_in "$tmp/err" "is not a directory"
expect_exit 1 "$AVO" export --db "$tmp/none.db" --csv "$tmp/x.csv"; expect_in "$tmp/err" "cannot open archive"
[ ! -e "$tmp/none.db" ] || fail "export created a missing archive"
expect_exit 1 "$AVO" export --db "$db" --run 99 --csv "$tmp/x.csv"; expect_in "$tmp/err" "no run 99"
[ ! -e "$tmp/x.csv" ] || fail "a failed export left a file"
expect_exit 1 "$AVO" export --db "$db" --run 99 --git "$tmp/g99";  expect_in "$tmp/err" "no run 99"
[ ! -e "$tmp/g99" ] || fail "a failed git export left a directory"
expect_exit 2 "$AVO" export --db "$db" --run x --csv "$tmp/x.csv"; expect_in "$tmp/err" "--run needs a run id, got 'x'"
expect_exit 2 "$AVO" export --db "$db";                         expect_in "$tmp/err" "export needs --csv, --json or --git"
expect_exit 2 "$AVO" export --db "$db" --csv a --json b;        expect_in "$tmp/err" "give one of"
expect_exit 1 "$AVO" export --db "$db" --csv "$tmp/no/dir/x.csv"; expect_in "$tmp/err" "cannot write"
echo "export: ok"
