#!/bin/sh
# A short quickstart run end to end: summary printed, every candidate and its
# parents archived, and the inspection commands work on the result.
. "$(dirname "$0")/lib.sh"
db="$tmp/q.db"
expect_exit 0 "$AVO" run examples/quickstart.lua --db "$db" --jobs 2 generations=2 population=4
expect_in "$tmp/out" "best #"
expect_in "$tmp/out" "speedup over the seed kernel"
expect_in "$tmp/out" "avo show"
n=$(q "$db" "SELECT count(*) FROM candidates")
[ "$n" -ge 8 ] || fail "expected at least 8 candidates, got $n"
[ "$(q "$db" "SELECT count(*) FROM candidates WHERE status = 'pending'")" = 0 ] || fail "pending left"
[ "$(q "$db" "SELECT count(*) FROM candidates WHERE operator <> 'seed' AND id NOT IN (SELECT child FROM edges)")" = 0 ] || fail "a child without parents"
[ "$(q "$db" "SELECT status FROM runs")" = done ] || fail "run not marked done"
[ "$(q "$db" "SELECT count(*) FROM runs WHERE script_source LIKE '%quickstart%' AND compiler <> '' AND host <> ''")" = 1 ] || fail "run metadata missing"
# avo best names the re-timed #1 (the run's end re-times its top 5 with the
# seed and OpenBLAS in the same rounds), not the maximum of noisy samples.
best=$(q "$db" "SELECT json_extract(data, '$.ranked[0].id') FROM events WHERE kind = 'retimed'")
[ -n "$best" ] || fail "no retimed event"

expect_exit 0 "$AVO" best --db "$db";            expect_in "$tmp/out" "candidate #$best"
expect_exit 0 "$AVO" best --db "$db" --json
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["id"]=='"$best"' and r["configs"], r' "$tmp/out"
expect_exit 0 "$AVO" show "$best" --db "$db" --source; expect_in "$tmp/out" "avo:param"
expect_exit 0 "$AVO" lineage "$best" --db "$db";  expect_in "$tmp/out" "seed"
expect_exit 0 "$AVO" lineage "$best" --db "$db" --json
expect_exit 1 "$AVO" show 99999 --db "$db";      expect_in "$tmp/err" "no candidate #99999"
echo "run_ga: ok"
