#!/bin/sh
# Re-timed bests (issue 21): at the end of every run and resume the top K
# of the best's evaluator (default 5, 3 rounds; --retime, --retime-rounds,
# avo.retime{}) are timed again in interleaved rounds, each evaluation a
# fresh process, stored as a rebench set and a "retimed" event; the summary,
# avo best and the report give each re-timed median with its interval and
# the ranking after re-timing; a candidate not ok in every round is out.
. "$(dirname "$0")/lib.sh"
db=$tmp/r.db
script=tests/e2e/retime_run.lua

expect_exit 0 "$AVO" run $script --db "$db" --jobs 1
expect_in "$tmp/err" "avo: re-timing the top 4 of axpy: 3 rounds, interleaved, each evaluation a fresh process"
expect_in "$tmp/out" "re-timed: top 4 of axpy, 3 rounds interleaved, each a fresh process"
[ "$(grep -c '^  [1-4]\. #[0-9]* ' "$tmp/out")" = 4 ] || { cat "$tmp/out"; fail "expected 4 ranked lines"; }
[ "$(q "$db" "SELECT count(*) FROM rebench_results")" = 12 ] ||
    fail "expected 4 candidates x 3 rounds: $(q "$db" "SELECT count(*) FROM rebench_results")"
[ "$(q "$db" "SELECT count(*) FROM rebench_results WHERE score <= 0")" = 0 ] || fail "a re-timed score is not positive"
[ "$(q "$db" "SELECT json_extract(config, '$.at_end') FROM rebench_sets")" = 1 ] || fail "the set is not marked at_end"
# The event: ranked by median, each median within its interval and equal to
# the median of its three stored rounds; the interval is not empty.
q "$db" "SELECT data FROM events WHERE kind = 'retimed'" > "$tmp/ev.json"
q "$db" "SELECT candidate_id, score FROM rebench_results" > "$tmp/rounds.txt"
python3 - "$tmp/ev.json" "$tmp/rounds.txt" <<'PY'
import json, statistics, sys
d = json.load(open(sys.argv[1]))
rounds = {}
for line in open(sys.argv[2]):
    cid, score = line.strip().split("|")
    rounds.setdefault(int(cid), []).append(float(score))
assert d["evaluator"] == "axpy" and d["top"] == 5 and d["rounds"] == 3 and d["dropped"] == [], d
meds = [e["median"] for e in d["ranked"]]
assert meds == sorted(meds, reverse=True), meds
for i, e in enumerate(d["ranked"]):
    assert e["rank"] == i + 1
    assert abs(e["median"] - statistics.median(rounds[e["id"]])) < 1e-9 * e["median"], (e, rounds[e["id"]])
    assert e["low"] <= e["median"] <= e["high"] and e["high"] > e["low"], e
PY
first=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["ranked"][0]["id"])' "$tmp/ev.json")
expect_exit 0 "$AVO" best --db "$db"
expect_in "$tmp/out" "re-timed at the end of run 1: top 4 of axpy, 3 rounds interleaved"
expect_in "$tmp/out" "  1. #$first "
# avo best is the re-timed #1 (issue 30), naming the search's recorded best beside it.
head -1 "$tmp/out" | grep -q "^candidate #$first " || fail "avo best is not the re-timed #1"
expect_in "$tmp/out" "  1. #$first "
grep -q "^  1\. #$first .*<- this candidate" "$tmp/out" || fail "the re-timed #1 is not marked"
best=$(q "$db" "SELECT id FROM candidates WHERE status = 'ok' ORDER BY score DESC, id LIMIT 1")
if [ "$best" != "$first" ]; then expect_in "$tmp/out" "the search's recorded best is #$best "; fi
expect_exit 0 "$AVO" show "$best" --db "$db"
if [ "$best" != "$first" ]; then expect_in "$tmp/out" "after re-timing the fastest is #$first"; fi
expect_exit 0 "$AVO" report --db "$db" -o "$tmp/r.html"
expect_in "$tmp/r.html" "<h2 id=\"retimed\">Re-timed bests</h2>"
expect_in "$tmp/r.html" "<td class=\"num\">1</td><td><a href=\"#c$first\">#$first</a>"
python3 -c 'import sys, xml.dom.minidom as m; m.parse(sys.argv[1])' "$tmp/r.html" ||
    fail "the report is not well-formed"

# Resume re-times again at its end (a second set); --retime 0 turns it off,
# and the resumed run keeps the option it was started with.
q "$db" "UPDATE runs SET status = 'interrupted', ended_at = NULL"
expect_exit 0 "$AVO" resume --db "$db"
expect_in "$tmp/out" "re-timed: top 4 of axpy"
[ "$(q "$db" "SELECT count(*) FROM events WHERE kind = 'retimed'")" = 2 ] || fail "resume did not re-time"
expect_exit 0 "$AVO" run $script --db "$tmp/off.db" --jobs 1 --retime 0
if grep -q "re-timed" "$tmp/out" "$tmp/err"; then fail "--retime 0 re-timed"; fi
q "$tmp/off.db" "UPDATE runs SET status = 'interrupted', ended_at = NULL"
expect_exit 0 "$AVO" resume --db "$tmp/off.db"
[ "$(q "$tmp/off.db" "SELECT count(*) FROM events WHERE kind = 'retimed'")" = 0 ] ||
    fail "resume of a --retime 0 run re-timed"
expect_exit 0 "$AVO" report --db "$tmp/off.db" -o "$tmp/off.html"
expect_in "$tmp/off.html" "not re-timed"

# The options, and the script's avo.retime{} (which the options override).
expect_exit 0 "$AVO" run $script --db "$tmp/o.db" --jobs 1 --retime 2 --retime-rounds 2
expect_in "$tmp/out" "re-timed: top 2 of axpy, 2 rounds"
[ "$(q "$tmp/o.db" "SELECT count(*) FROM rebench_results")" = 4 ] || fail "--retime 2 --retime-rounds 2"
RETIME_TOP=3 RETIME_ROUNDS=2 expect_exit 0 "$AVO" run $script --db "$tmp/s.db" --jobs 1
expect_in "$tmp/out" "re-timed: top 3 of axpy, 2 rounds"
RETIME_TOP=3 expect_exit 0 "$AVO" run $script --db "$tmp/s2.db" --jobs 1 --retime 1
expect_in "$tmp/out" "re-timed: top 1 of axpy, 2 rounds"

# A candidate not ok in a round is out, never ranked.
RETIME_BREAK=1 expect_exit 0 "$AVO" run $script --db "$tmp/b.db" --jobs 1 --retime-rounds 2
broken=$(sed -n 's/^broken: #//p' "$tmp/out")
[ -n "$broken" ] || fail "the script broke nothing"
grep -q "^  -  #$broken out: compile_error in round 1" "$tmp/out" ||
    { cat "$tmp/out"; fail "#$broken is not shown out"; }
grep -q "^  [0-9]\. #$broken " "$tmp/out" && { cat "$tmp/out"; fail "#$broken is ranked"; }
[ "$(grep -c '^  [1-3]\. #' "$tmp/out")" = 3 ] || { cat "$tmp/out"; fail "the other three are not ranked"; }
expect_exit 0 "$AVO" best --db "$tmp/b.db"
expect_in "$tmp/out" "out: compile_error in round 1"

# Bad values.
expect_exit 2 "$AVO" run $script --db "$tmp/x.db" --retime-rounds 0
expect_in "$tmp/err" "--retime-rounds needs an integer from 1 to 1000"
RETIME_TOP=-1 expect_exit 1 "$AVO" run $script --db "$tmp/y.db" --jobs 1
expect_in "$tmp/err" "avo.retime: 'top' must be an integer from 0 to 1000"
echo "retime: ok"
