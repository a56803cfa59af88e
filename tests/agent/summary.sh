#!/bin/sh
# What `avo runs` and `avo report` say about a run's agent: attempts
# (directions explored vs versions committed, every outcome) and the unit
# its evaluator measures in.  Run 1 is the retime agent test (re-timings
# count as outcomes, not as directions explored; the agent tests expect to
# be run 1), run 2 one CPU evaluation in GFLOP/s without attempts.
. "$(dirname "$0")/../e2e/lib.sh"
unset AVO_LLM_REPLAY AVO_LLM_MODEL AVO_LLM_API_KEY AVO_LLM_BASE_URL
db="$tmp/t.db"
AVO_LLM_PROVIDER=scripted AVO_LLM_SCRIPT=tests/agent/retime.jsonl \
    expect_exit 0 "$AVO" run tests/agent/retime.lua --db "$db" --jobs 1 db="$db" tmp="$tmp"
expect_in "$tmp/err" "agent retime: ok"
cat >"$tmp/axpy.lua" <<'LUA'
local avo = require "avo"
local ev = avo.evaluator("tests/e2e/evaluators/axpy.lua")
local r = avo.evaluate(ev, ev:seed())
assert(r.status == "ok", tostring(r.reason))
LUA
expect_exit 0 "$AVO" run "$tmp/axpy.lua" --db "$db" --jobs 1

# --json: the summary of each run, checked against the archive.
expect_exit 0 "$AVO" runs --db "$db" --json
counts=$(python3 - "$tmp/out" "$db" <<'PY'
import json, sqlite3, sys
runs = json.load(open(sys.argv[1]))
db = sqlite3.connect(sys.argv[2])
assert [r["id"] for r in runs] == [1, 2], runs
assert runs[0]["unit"] == "score" and runs[1]["unit"] == "GFLOP/s", [r["unit"] for r in runs]
assert runs[1]["attempts"] == {"explored": 0, "committed": 0, "outcomes": {}}, runs[1]["attempts"]
a = runs[0]["attempts"]
outcomes = dict(db.execute("SELECT outcome, count(*) FROM attempts WHERE run_id = 1 GROUP BY outcome"))
assert a["outcomes"] == outcomes, (a, outcomes)
assert outcomes.get("retime", 0) > 0 and outcomes.get("committed", 0) > 0, outcomes
assert a["explored"] == sum(n for o, n in outcomes.items() if o != "retime"), a
assert a["committed"] == outcomes["committed"], a
print("%d/%d" % (a["explored"], a["committed"]))
PY
) || fail "runs --json"

# The table: an attempts column (a dash for the CPU run) and units (none
# shown for plain scores).
expect_exit 0 "$AVO" runs --db "$db"
expect_in "$tmp/out" "explored/committed"
grep "tests/agent/retime.lua" "$tmp/out" | grep -qF " $counts " || fail "no '$counts' on the agent run's line"
! grep "tests/agent/retime.lua" "$tmp/out" | grep -q " score " || fail "plain scores have no unit to show"
grep "axpy.lua" "$tmp/out" | grep -q "GFLOP/s\( rt\)\{0,1\}  *- " || fail "CPU run: unit (re-timed: rt), then no attempts"

# The report: attempts in the run section, the unit on the score axes.
expect_exit 0 "$AVO" report --db "$db" --run 1 -o "$tmp/r1.html"
expect_in "$tmp/r1.html" "<th>agent attempts</th><td>${counts%/*} explored, ${counts#*/} committed ("
expect_in "$tmp/r1.html" "retime $(q "$db" "SELECT count(*) FROM attempts WHERE outcome = 'retime'")"
expect_exit 0 "$AVO" report --db "$db" --run 2 -o "$tmp/r2.html"
expect_in "$tmp/r2.html" "rotate(-90)\" text-anchor=\"middle\">GFLOP/s</text>"
expect_in "$tmp/r2.html" "<th>score unit</th><td>GFLOP/s</td>"
! grep -q "agent attempts" "$tmp/r2.html" || fail "attempts shown for a run without"

# A run recorded before units were: the axis says "score".
q "$db" "UPDATE events SET data = json_remove(data, '$.unit') WHERE kind = 'evaluator' AND run_id = 2"
expect_exit 0 "$AVO" report --db "$db" --run 2 -o "$tmp/r2.html"
expect_in "$tmp/r2.html" "rotate(-90)\" text-anchor=\"middle\">score</text>"
echo "agent summary: ok"
