#!/bin/sh
# Help, usage errors and exit codes of the CLI.
. "$(dirname "$0")/lib.sh"
expect_exit 0 "$AVO" --help;            expect_in "$tmp/out" "usage: avo COMMAND"
for cmd in run eval best show lineage; do
    expect_exit 0 "$AVO" "$cmd" --help; expect_in "$tmp/out" "usage: avo $cmd"
done
expect_exit 2 "$AVO";                   expect_in "$tmp/err" "usage: avo COMMAND"
expect_exit 2 "$AVO" frobnicate;        expect_in "$tmp/err" "unknown command 'frobnicate'"
expect_exit 2 "$AVO" run;               expect_in "$tmp/err" "run needs a script"
expect_exit 2 "$AVO" run x.lua --jobs 2000; expect_in "$tmp/err" "--jobs needs an integer"
expect_exit 2 "$AVO" run x.lua --max-time soon; expect_in "$tmp/err" "--max-time needs"
expect_exit 2 "$AVO" run x.lua notkeyvalue; expect_in "$tmp/err" "expected KEY=VALUE"
expect_exit 2 "$AVO" run "$tmp/missing.lua"; expect_in "$tmp/err" "cannot read script"
expect_exit 2 "$AVO" eval kernels/cpu/sgemm.c; expect_in "$tmp/err" "eval needs --evaluator"
expect_exit 2 "$AVO" show;              expect_in "$tmp/err" "expected one candidate id"
expect_exit 2 "$AVO" show abc;          expect_in "$tmp/err" "positive integer"
expect_exit 1 "$AVO" best --db "$tmp/none.db"; expect_in "$tmp/err" "cannot open archive"
[ ! -e "$tmp/none.db" ] || fail "a query created an archive"

# A newer archive schema is refused with a clear message.
sqlite3 "$tmp/new.db" "PRAGMA user_version = 99; CREATE TABLE x(y);"
expect_exit 1 "$AVO" best --db "$tmp/new.db"; expect_in "$tmp/err" "99"
# A run that does not exist is named as such.
"$AVO" run tests/lua/ga_synthetic.lua --db "$tmp/s.db" >/dev/null 2>&1
expect_exit 1 "$AVO" best --db "$tmp/s.db" --run 9; expect_in "$tmp/err" "no run 9"
expect_exit 0 "$AVO" best --db "$tmp/s.db" --run 1
echo "cli_usage: ok"
