#!/bin/sh
# avo rebench: re-times the top K, the seed and the evaluator's baselines in
# interleaved rounds, ranks by median (only candidates ok in every round),
# prints each median with its interval and the paired ratios (per round) to
# the seed and the baselines, and stores a new evaluation set.
. "$(dirname "$0")/lib.sh"
db="$tmp/r.db"
# --retime 0: the run's own re-timing at its end (tests/e2e/retime.sh) would be set 1
expect_exit 0 "$AVO" run examples/quickstart.lua --db "$db" --jobs 2 generations=1 population=4 --retime 0
expect_exit 0 "$AVO" rebench --db "$db" --top 2 --rounds 2
expect_in "$tmp/out" "rebench set 1 of run 1 (sgemm, 2 rounds)"
expect_in "$tmp/out" "paired per round (median [95% interval])"
grep -q "^[0-9]  *#[0-9]*  *seed .*  the seed, [0-9.]*x openblas \[" "$tmp/out" ||
    { cat "$tmp/out"; fail "the seed is not timed with openblas in the rounds"; }
expect_in "$tmp/out" "baseline openblas in the same rounds: "
rows=$(q "$db" "SELECT count(*) FROM rebench_results WHERE set_id = 1")
seed_top=$(q "$db" "SELECT count(*) FROM (SELECT id, operator FROM candidates WHERE status = 'ok'
                    ORDER BY score DESC, id LIMIT 2) WHERE operator = 'seed'")
[ "$rows" -eq $(( (3 - seed_top) * 2 )) ] || fail "expected one row per candidate and round, got $rows"
[ "$(q "$db" "SELECT count(*) FROM rebench_results WHERE score <= 0")" = 0 ] || fail "a rebench score is not positive"

# A candidate that is not ok in a round (here its stored knobs no longer
# compile) is shown failed and never ranked; the others are ranked by median.
top=$(q "$db" "SELECT id FROM candidates WHERE status = 'ok' AND operator <> 'seed'
               ORDER BY score DESC, id LIMIT 1")
[ -n "$top" ] || fail "the run has no verified candidate besides the seed"
q "$db" "UPDATE candidates SET knobs = json_set(knobs, '\$.UNROLL', 'x(') WHERE id = $top"
expect_exit 0 "$AVO" rebench --db "$db" --top 2 --rounds 2
grep -q "^-  *#$top .* failed: compile_error in round 1" "$tmp/out" ||
    { cat "$tmp/out"; fail "#$top failed its re-timing but is not shown failed"; }
grep -q "^[0-9][0-9]*  *#$top " "$tmp/out" && { cat "$tmp/out"; fail "#$top failed its re-timing but is ranked"; }
grep -q "^1  *#" "$tmp/out" || { cat "$tmp/out"; fail "no candidate ranked"; }
expect_in "$tmp/out" "1 candidate(s) not ok in every round: not ranked"

expect_exit 0 "$AVO" run tests/lua/ga_synthetic.lua --db "$tmp/t.db"
expect_exit 1 "$AVO" rebench --db "$tmp/t.db"; expect_in "$tmp/err" "nothing to time"
expect_exit 2 "$AVO" rebench;                  expect_in "$tmp/err" "rebench needs --db"
expect_exit 2 "$AVO" rebench --db "$db" --top 0; expect_in "$tmp/err" "--top needs an integer from 1 to 1000, got '0'"
expect_exit 2 "$AVO" resume --db "$db" --rounds 3; expect_in "$tmp/err" "unrecognised option '--rounds'"
echo "rebench: ok"
