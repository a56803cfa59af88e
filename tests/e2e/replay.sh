#!/bin/sh
# avo replay: a recorded run re-executes to the identical lineage; a changed
# evaluator is reported as the cause of divergence.
. "$(dirname "$0")/lib.sh"
expect_exit 0 "$AVO" run tests/lua/ga_synthetic.lua --db "$tmp/a.db" --seed 5
expect_exit 0 "$AVO" replay --db "$tmp/a.db" --out "$tmp/b.db"
n=$(q "$tmp/a.db" "SELECT count(*) FROM candidates")
[ "$n" -ge 20 ] || fail "expected a few generations of candidates, got $n"
expect_in "$tmp/out" "replay identical: $n candidates"
expect_exit 2 "$AVO" replay --db "$tmp/a.db" --out "$tmp/b.db"; expect_in "$tmp/err" "exists"
expect_exit 2 "$AVO" replay --db "$tmp/a.db";                   expect_in "$tmp/err" "replay needs --out"

# Same run, evaluator edited afterwards: divergence names the evaluator.
mkdir -p "$tmp/ev"
cp tests/lua/evaluators/synthetic.lua "$tmp/ev/syn.lua"
sed "s|tests/lua/evaluators/synthetic.lua|$tmp/ev/syn.lua|" tests/lua/ga_synthetic.lua > "$tmp/ga.lua"
expect_exit 0 "$AVO" run "$tmp/ga.lua" --db "$tmp/c.db" --seed 5
sed -i 's/s \* 1.5 end/s * 1.7 end/' "$tmp/ev/syn.lua"
expect_exit 1 "$AVO" replay --db "$tmp/c.db" --out "$tmp/d.db"
expect_in "$tmp/out" "replay diverged: evaluator synthetic"
expect_in "$tmp/out" "changed since the recorded run"
echo "replay: ok"
