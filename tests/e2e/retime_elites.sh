#!/bin/sh
# The GA's retime_elites: each elite measured fewer than K + 1 times is timed
# again every generation (attempts, outcome "retime"), and the generation
# ranks it by the median of its measurements.  On lucky.lua a candidate
# with BK=16 measures 5x its score the first time only: its re-timings say
# so, and the elites of every generation (event "elites") are ranked by
# the medians, not by the lucky first figures.  Same lineage with --jobs 1
# and 2, and under avo replay.  Bad values name the option.
. "$(dirname "$0")/lib.sh"

RETIME=2 expect_exit 0 "$AVO" run tests/lua/ga_retime.lua --db "$tmp/a.db" --seed 4 --jobs 2
db="$tmp/a.db"
n=$(q "$db" "SELECT count(*) FROM attempts WHERE outcome = 'retime'")
[ "$n" -ge 4 ] || fail "expected elites re-timed, got $n re-timings"
[ "$(q "$db" "SELECT count(*) FROM attempts WHERE outcome = 'retime' AND candidate_id IS NULL")" = 0 ] ||
    fail "a re-timing names no candidate"
[ "$(q "$db" "SELECT max(k) FROM (SELECT count(*) AS k FROM attempts WHERE outcome = 'retime'
                GROUP BY candidate_id)")" -le 2 ] || fail "an elite was re-timed more than retime_elites times"
# A lucky candidate's re-timing measures a fifth of its recorded score; the
# others measure theirs.
q "$db" "SELECT c.id, json_extract(c.knobs, '$.BK'), c.score / a.score FROM attempts a
         JOIN candidates c ON c.id = a.candidate_id WHERE a.outcome = 'retime'" > "$tmp/ratios"
awk -F'|' '$2 == 16 && ($3 < 4.999 || $3 > 5.001) { exit 1 }
           $2 != 16 && ($3 < 0.999 || $3 > 1.001) { exit 1 }' "$tmp/ratios" ||
    { cat "$tmp/ratios"; fail "re-timings are not the evaluator's later measurements"; }
grep -q '|16|' "$tmp/ratios" || fail "no lucky candidate was an elite (the test proves nothing)"
# Every generation's elites: scored by the median of their measurements (the
# recorded figure and the re-timings up to that generation), best first.
python3 - "$db" <<'PY' || fail "the elites are not ranked by their medians"
import json, sqlite3, statistics, sys
db = sqlite3.connect(sys.argv[1])
events = [json.loads(d) for (d,) in db.execute(
    "SELECT data FROM events WHERE kind = 'elites' ORDER BY id")]
assert events, "no elites event"
demoted = 0
for ev in events:
    g = ev["generation"]
    scores = [e["score"] for e in ev["elites"]]
    assert scores == sorted(scores, reverse=True), ev
    for e in ev["elites"]:
        rec = db.execute("SELECT score FROM candidates WHERE id = ?", (e["id"],)).fetchone()[0]
        again = [s for (s,) in db.execute("SELECT score FROM attempts WHERE outcome = 'retime' "
                                          "AND candidate_id = ? AND step <= ?", (e["id"], g))]
        ms = [rec] + again
        assert e["measurements"] == len(ms), (e, ms)
        assert abs(e["score"] - statistics.median(ms)) < 1e-9 * max(1, rec), (e, ms)
        demoted += e["score"] < rec
assert demoted > 0, "no elite ranked below its recorded figure"
PY

# Reproducible: the same lineage and re-timings with one job; and replayed.
lineage() {
    q "$1" "SELECT id, operator, knobs FROM candidates ORDER BY id;
            SELECT step, candidate_id, score FROM attempts ORDER BY id"
}
RETIME=2 expect_exit 0 "$AVO" run tests/lua/ga_retime.lua --db "$tmp/b.db" --seed 4 --jobs 1
lineage "$tmp/a.db" > "$tmp/a.txt"
lineage "$tmp/b.db" > "$tmp/b.txt"
cmp -s "$tmp/a.txt" "$tmp/b.txt" || { diff "$tmp/a.txt" "$tmp/b.txt" | head; fail "--jobs 1 and 2 differ"; }
RETIME=2 expect_exit 0 "$AVO" replay --db "$tmp/a.db" --out "$tmp/c.db"
expect_in "$tmp/out" "replay identical"

# Bad values name the option; islands does not take it.
RETIME=-1 expect_exit 1 "$AVO" run tests/lua/ga_retime.lua --db "$tmp/d.db"
expect_in "$tmp/err" "retime_elites"
expect_in "$tmp/err" "an integer >= 0"
cat > "$tmp/islands.lua" <<'LUA'
local avo = require "avo"
return avo.strategy("islands").run{ evaluator = "tests/lua/evaluators/lucky.lua", retime_elites = 1 }
LUA
expect_exit 1 "$AVO" run "$tmp/islands.lua" --db "$tmp/e.db"
expect_in "$tmp/err" "retime_elites"
echo "retime_elites: ok"
