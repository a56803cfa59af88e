#!/bin/sh
# Bad arguments and dangerous outputs:
#  - report/export never write over an archive (the one read, another path
#    to it, or any SQLite database) and leave it intact;
#  - KEY=VALUE is checked: against avo.options in a script (abc, nan, an
#    unknown name, a duplicate), against the strategy's own options when the
#    script returns a strategy (exit 2 either way); errors name the user's
#    script;
#  - non-UTF-8 paths are refused clearly (never a silent ./avo.db), limits
#    are stated truthfully, resume without --run picks the unfinished run,
#    the examples find kernels/kb from any directory.
. "$(dirname "$0")/lib.sh"
db="$tmp/a.db"
expect_exit 0 "$AVO" run tests/lua/ga_synthetic.lua --db "$db"
sum=$(md5sum "$db" | cut -d' ' -f1)
n=$(q "$db" "SELECT count(*) FROM candidates")

# -- outputs
expect_exit 2 "$AVO" report --db "$db" -o "$db"
expect_in "$tmp/err" "refusing to write the report to $db: that is the archive it is read from"
ln -s "$db" "$tmp/link.db"
expect_exit 2 "$AVO" export --db "$db" --csv "$tmp/link.db"
expect_in "$tmp/err" "that is the archive it is read from"
expect_exit 2 "$AVO" export --db "$db" --json "$db-wal"
expect_exit 0 "$AVO" run tests/lua/ga_synthetic.lua --db "$tmp/other.db"
expect_exit 2 "$AVO" export --db "$db" --json "$tmp/other.db"
expect_in "$tmp/err" "it is an SQLite database (an archive?)"
expect_exit 2 "$AVO" report --db "$db" -o "$tmp/other.db"
[ "$(q "$db" "SELECT count(*) FROM candidates")" = "$n" ] || fail "an archive lost candidates"
[ "$(q "$tmp/other.db" "PRAGMA integrity_check")" = ok ] || fail "another archive was overwritten"
expect_exit 0 "$AVO" export --db "$db" --csv "$tmp/out.csv"
expect_exit 0 "$AVO" report --db "$db" -o "$tmp/r.html"
ls "$tmp" | grep -q '\.tmp\.' && fail "a temporary output file was left behind"

# -- KEY=VALUE against avo.options (examples/quickstart.lua)
for bad in population=abc population=nan population=1 generations=-1; do
    expect_exit 2 "$AVO" run examples/quickstart.lua --db "$tmp/q.db" "$bad"
    expect_in "$tmp/err" "avo: examples/quickstart.lua:13: argument $bad must be an integer"
done
expect_exit 2 "$AVO" run examples/quickstart.lua --db "$tmp/q.db" populaton=5
expect_in "$tmp/err" "argument 'populaton' is not an option of this script (options: generations, population)"
expect_exit 2 "$AVO" run examples/quickstart.lua --db "$tmp/q.db" population=4 population=5
expect_in "$tmp/err" "argument 'population' is given twice"
[ "$(q "$tmp/q.db" "SELECT count(*) FROM candidates")" = 0 ] || fail "a refused argument started evaluating"
[ "$(q "$tmp/q.db" "SELECT group_concat(DISTINCT status) FROM runs")" = stopped ] ||
    fail "a run refused for its arguments is not recorded as stopped"
# Every example checks its arguments the same way, before anything else: no
# GPU, no LLM configuration and no evaluation is needed to refuse them.
(
    unset AVO_LLM_PROVIDER AVO_LLM_SCRIPT AVO_LLM_MODEL AVO_LLM_API_KEY AVO_LLM_BASE_URL
    for case in \
        "avo_cpu.lua:steps=abc:must be an integer >= 0" \
        "avo_cpu.lua:steps=nan:must be an integer >= 0" \
        "avo_cpu.lua:lineages=0:must be an integer >= 1" \
        "avo_cpu.lua:max_turns=2.5:must be an integer >= 1" \
        "avo_cpu.lua:context_tokens=inf:must be an integer >= 1" \
        "avo_cpu.lua:stall=-1:must be an integer >= 0" \
        "avo_attention.lua:steps=-3:must be an integer >= 0" \
        "avo_attention.lua:lineages=x:must be an integer >= 1" \
        "avo_attention.lua:stall=nan:must be an integer >= 0" \
        "gpu_quick.lua:generations=-1:must be an integer >= 0" \
        "gpu_quick.lua:population=abc:must be an integer >= 2" \
        "gqa_transfer.lua:id=abc:must be an integer >= 1" \
        "gqa_transfer.lua:steps=1e400:must be an integer >= 0" \
        "llm_mutate.lua:population=0:must be an integer >= 2" \
        "llm_mutate.lua:llm_weight=nan:must be a finite number >= 0" \
        "llm_mutate.lua:top=-1:must be an integer >= 0" \
        "llm_mutate.lua:max_tokens=0:must be an integer >= 1" \
        "llm_mutate.lua:fix_attempts=one:must be an integer >= 0"; do
        script=${case%%:*} rest=${case#*:}
        arg=${rest%%:*} why=${rest#*:}
        rm -f "$tmp/x.db"
        expect_exit 2 "$AVO" run "examples/$script" --db "$tmp/x.db" "$arg"
        expect_in "$tmp/err" "examples/$script:"
        expect_in "$tmp/err" "argument $arg $why"
        [ "$(q "$tmp/x.db" "SELECT count(*) FROM candidates")" = 0 ] ||
            fail "examples/$script $arg started evaluating"
    done
    for script in avo_cpu avo_attention gpu_quick gqa_transfer llm_mutate; do
        expect_exit 2 "$AVO" run "examples/$script.lua" --db "$tmp/x.db" stal=2
        expect_in "$tmp/err" "examples/$script.lua:"
        expect_in "$tmp/err" "argument 'stal' is not an option of this script"
    done
    # A valid argument list gets past the check (to the missing LLM setup).
    expect_exit 2 "$AVO" run examples/avo_cpu.lua --db "$tmp/x.db" steps=2 stall=1 kb="$tmp/kb.db"
    expect_in "$tmp/err" "AVO_LLM_PROVIDER"
)
# ... and against the strategy's options when the script returns a strategy.
printf 'return require("avo").strategy("ga")\n' > "$tmp/strategy.lua"
# A usage error like avo.options' own: exit 2, no traceback, run stopped.
expect_exit 2 "$AVO" run "$tmp/strategy.lua" --db "$tmp/q.db" evaluator=tests/lua/evaluators/synthetic.lua population=abc
expect_in "$tmp/err" "avo: $tmp/strategy.lua: ga: option 'population' must be an integer >= 2, got abc"
grep -q "stack traceback" "$tmp/err" && fail "a refused strategy option printed a traceback"
[ "$(q "$tmp/q.db" "SELECT status FROM runs ORDER BY id DESC LIMIT 1")" = stopped ] ||
    fail "a run refused for its strategy's options is not recorded as stopped"
expect_exit 2 "$AVO" run strategies/ga.lua --db "$tmp/q.db" population=4
expect_in "$tmp/err" "avo: strategies/ga.lua: ga: option 'evaluator' must be given"
expect_exit 0 "$AVO" run "$tmp/strategy.lua" --db "$tmp/q.db" evaluator=tests/lua/evaluators/synthetic.lua population=4 generations=1
[ "$(q "$tmp/q.db" "SELECT count(*) FROM candidates WHERE run_id = (SELECT max(id) FROM runs) AND generation = 0")" = 4 ] ||
    fail "population=4 did not reach the strategy as a number"

# -- non-UTF-8 paths, limits
bad=$(printf 'bad\377.db')
( cd "$tmp" && expect_exit 2 "$AVO" run "$AVO_SOURCE_ROOT/tests/lua/ga_synthetic.lua" --db "$bad" )
expect_in "$tmp/err" "the value of --db is not valid UTF-8 ('bad\\xff.db')"
[ ! -e "$tmp/avo.db" ] || fail "a non-UTF-8 --db wrote ./avo.db"
expect_exit 2 "$AVO" run tests/lua/ga_synthetic.lua --seed -1 --db "$tmp/s.db"
expect_in "$tmp/err" "--seed needs an integer from 0 to 9223372036854775807"
expect_exit 0 "$AVO" run tests/lua/ga_synthetic.lua --seed 9223372036854775807 --db "$tmp/s.db"

# -- resume without --run picks the unfinished run, not the latest one
AVO_TEST_SLOW_MS=40 "$AVO" run tests/lua/ga_synthetic.lua --db "$tmp/r.db" >/dev/null 2>&1 &
pid=$!
wait_for "$tmp/r.db" "SELECT count(*) FROM candidates WHERE status <> 'pending'"
kill -9 "$pid"; wait "$pid" 2>/dev/null || true
expect_exit 0 "$AVO" run tests/lua/ga_synthetic.lua --db "$tmp/r.db" --seed 3
expect_exit 0 "$AVO" resume --db "$tmp/r.db"
expect_in "$tmp/err" "resuming run 1"
[ "$(q "$tmp/r.db" "SELECT group_concat(status) FROM runs")" = "done,done" ] || fail "the unfinished run was not resumed"
expect_exit 1 "$AVO" resume --db "$tmp/r.db"
expect_in "$tmp/err" "every run in $tmp/r.db finished; there is nothing to resume"

# -- the examples' knowledge base resolves like evaluators, from anywhere
( cd "$tmp" && AVO_LLM_PROVIDER=scripted AVO_LLM_SCRIPT="$AVO_SOURCE_ROOT/examples/avo_cpu.jsonl" \
    expect_exit 0 "$AVO" run "$AVO_SOURCE_ROOT/examples/avo_cpu.lua" --db "$tmp/kb.db" steps=1 stall=2 )
[ "$(q "$tmp/kb.db" "SELECT count(*) FROM kb_docs")" -gt 0 ] || fail "kernels/kb was not indexed from outside the source tree"
echo "arguments: ok"
