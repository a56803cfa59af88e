#!/bin/sh
# Baselines (docs/evaluators.md "baselines") on the CPU: kernel baselines
# are measured once per run beside the search, stored in the baselines
# table, never counted as evaluations nor made candidates, and shown by the
# status line, the summary, avo eval, avo runs, avo best, avo report and the
# exports with the best's ratio to the strongest; a wrong baseline is shown
# wrong and never compared with; resume does not measure a stored baseline
# again (one lost or recorded as an infrastructure error it does).
. "$(dirname "$0")/lib.sh"
db=$tmp/b.db
script=tests/e2e/baselines_run.lua
ev=tests/e2e/evaluators/axpy_baselines.lua

expect_exit 0 "$AVO" run $script --db "$db" --jobs 1
expect_in "$tmp/out" "baselines seen by the script: 2"
[ "$(q "$db" "SELECT count(*) FROM baselines")" = 2 ] || fail "expected 2 baseline rows"
[ "$(q "$db" "SELECT count(*) FROM candidates")" = 3 ] || fail "a baseline became a candidate"
[ "$(q "$db" "SELECT group_concat(name || ':' || device || ':' || status || ':' || library, ' ')
    FROM (SELECT * FROM baselines ORDER BY name)")" = "broken:cpu:wrong:kernel plain:cpu:ok:kernel" ] ||
    fail "baseline rows: $(q "$db" "SELECT * FROM baselines")"
[ "$(q "$db" "SELECT score IS NULL FROM baselines WHERE name = 'broken'")" = 1 ] ||
    fail "a wrong baseline has a score"
expect_in "$tmp/err" "baseline broken on cpu: wrong (config n1000: max error"
# The ratio shown is the best's score over the strongest (plain) baseline's.
best=$(q "$db" "SELECT max(score) FROM candidates WHERE status = 'ok'")
plain=$(q "$db" "SELECT score FROM baselines WHERE name = 'plain'")
ratio=$(python3 -c "import sys; print('%.2f' % (float(sys.argv[1]) / float(sys.argv[2])))" "$best" "$plain")
# A kernel baseline's version is its source's content hash (plain's file is the seed's).
[ "$(q "$db" "SELECT version FROM baselines WHERE name = 'plain'")" = \
  "$(q "$db" "SELECT source_hash FROM candidates WHERE operator = 'seed'")" ] ||
    fail "plain's version is not its source's hash"
expect_in "$tmp/err" "${ratio}x plain"
expect_in "$tmp/out" "baseline plain (kernel"
expect_in "$tmp/out" "best is ${ratio}x"
expect_in "$tmp/out" "baseline broken (cpu): wrong (config n1000"
if grep -q "x broken" "$tmp/err" "$tmp/out"; then fail "a wrong baseline was compared with"; fi

# avo runs: the column; avo best: the run's baselines.
expect_exit 0 "$AVO" runs --db "$db"
expect_in "$tmp/out" "vs baseline"
# (avo runs: the re-timed #1 and its paired ratio, from the retimed event.)
paired=$(q "$db" "SELECT data FROM events WHERE kind = 'retimed'" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print("%.2f" % [p for p in d["ranked"][0]["paired"] if p["against"] == sys.argv[1]][0]["median"])' plain)
expect_in "$tmp/out" "${paired}x plain paired"
# (avo best is the re-timed #1; the search's recorded best is shown by id.)
recorded=$(q "$db" "SELECT id FROM candidates WHERE status = 'ok' ORDER BY score DESC, id LIMIT 1")
expect_exit 0 "$AVO" show "$recorded" --db "$db"
expect_in "$tmp/out" "baselines of run 1 (measured beside the search; ratios unpaired):"
expect_in "$tmp/out" "broken: wrong (config n1000"
expect_in "$tmp/out" "plain "
expect_in "$tmp/out" "this candidate ${ratio}x"

# avo report: a reference line for plain, a table with broken as wrong.
expect_exit 0 "$AVO" report --db "$db" -o "$tmp/r.html"
expect_in "$tmp/r.html" "<h2 id=\"baselines\">Baselines</h2>"
expect_in "$tmp/r.html" "plain (cpu)</text>"
# (the report's best is the re-timed #1; its recorded ratio follows, labelled)
first=$(q "$db" "SELECT json_extract(data, '$.ranked[0].id') FROM events WHERE kind = 'retimed'")
rratio=$(python3 -c "import sys; print('%.2f' % (float(sys.argv[1]) / float(sys.argv[2])))" \
    "$(q "$db" "SELECT score FROM candidates WHERE id = $first")" "$plain")
expect_in "$tmp/r.html" "${rratio}x plain (the strongest baseline"
expect_in "$tmp/r.html" "<td>wrong (config n1000"
if grep -q "broken (cpu)</text>" "$tmp/r.html"; then fail "a wrong baseline got a reference line"; fi
python3 -c 'import sys, xml.dom.minidom as m; m.parse(sys.argv[1])' "$tmp/r.html" ||
    fail "the report is not well-formed"

# Exports: JSON baselines array, CSV --what baselines (no score for broken).
expect_exit 0 "$AVO" export --db "$db" --json "$tmp/e.json"
python3 - "$tmp/e.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rows = {b["name"]: b for b in d["baselines"]}
assert set(rows) == {"plain", "broken"}, rows
assert rows["plain"]["status"] == "ok" and rows["plain"]["score"] > 0
assert rows["broken"]["status"] == "wrong" and rows["broken"]["score"] is None
assert rows["plain"]["result"]["configs"][0]["correct"]
assert d["runs"][0]["baselines"][0]["name"] in rows
PY
expect_exit 0 "$AVO" export --db "$db" --csv "$tmp/b.csv" --what baselines
python3 - "$tmp/b.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
assert {r["baseline"] for r in rows} == {"plain", "broken"}, rows
for r in rows:
    if r["baseline"] == "broken":
        assert r["status"] == "wrong" and r["score"] == "", r
    else:
        assert r["status"] == "ok" and float(r["score"]) > 0 and r["correct"] == "1", r
assert {r["config"] for r in rows if r["baseline"] == "plain"} == {"n1000", "n4097"}
PY
expect_exit 2 "$AVO" export --db "$db" --csv - --what nope
expect_in "$tmp/err" "--what must be candidates or baselines, got 'nope'"
expect_exit 2 "$AVO" export --db "$db" --json - --what baselines
expect_in "$tmp/err" "--what applies to --csv"

# Resume: a stored baseline is not measured again; a missing one, or one
# recorded as an infrastructure error, is.
created=$(q "$db" "SELECT group_concat(created_at) FROM (SELECT created_at FROM baselines ORDER BY name)")
q "$db" "UPDATE runs SET status = 'interrupted', ended_at = NULL"
expect_exit 0 "$AVO" resume --db "$db"
[ "$(q "$db" "SELECT group_concat(created_at) FROM (SELECT created_at FROM baselines ORDER BY name)")" = "$created" ] ||
    fail "resume measured a stored baseline again"
q "$db" "DELETE FROM baselines WHERE name = 'plain'; UPDATE baselines SET status = 'error'
         WHERE name = 'broken'; UPDATE runs SET status = 'interrupted', ended_at = NULL"
expect_exit 0 "$AVO" resume --db "$db"
[ "$(q "$db" "SELECT group_concat(name || ':' || status) FROM (SELECT * FROM baselines ORDER BY name)")" = \
  "broken:wrong,plain:ok" ] || fail "resume did not measure the missing baselines: $(q "$db" "SELECT * FROM baselines")"

# Two evaluators of one run naming the same baseline: both kept.
cat > "$tmp/second.lua" <<LUA
local ev = dofile("$AVO_SOURCE_ROOT/$ev")
ev.name = "axpy_second"
ev.configs = { ev.configs[1] }
ev.baselines = { ev.baselines[1] }
return ev
LUA
BASELINES_SECOND=$tmp/second.lua expect_exit 0 "$AVO" run $script --db "$tmp/two.db" --jobs 1
[ "$(q "$tmp/two.db" "SELECT group_concat(name) FROM (SELECT name FROM baselines ORDER BY name)")" = \
  "broken,plain,plain@axpy_second" ] || fail "baselines of two evaluators: $(q "$tmp/two.db" "SELECT name FROM baselines")"

# avo eval: a row per baseline beside the candidate.
expect_exit 0 "$AVO" eval tests/e2e/kernels/axpy.c --evaluator $ev
expect_in "$tmp/out" "baselines:"
expect_in "$tmp/out" "plain        ok       score"
expect_in "$tmp/out" "broken       wrong    config n1000: max error"
expect_in "$tmp/out" "| broken wrong (config n1000"
expect_exit 0 "$AVO" eval tests/e2e/kernels/axpy.c --evaluator $ev --json
python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
b = {x["name"]: x for x in r["baselines"]}
assert b["plain"]["status"] == "ok" and b["plain"]["score"] > 0, b
assert b["broken"]["status"] == "wrong" and "score" not in b["broken"], b
' "$tmp/out"
echo "baselines: ok"
