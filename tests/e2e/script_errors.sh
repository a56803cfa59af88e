#!/bin/sh
# Errors in a user's script name file and line (a traceback with --debug); exit 1.
. "$(dirname "$0")/lib.sh"
mkdir -p "$tmp/s"
printf 'local avo = require "avo"\nlocal x = = 1\n' > "$tmp/s/syntax.lua"
expect_exit 1 "$AVO" run "$tmp/s/syntax.lua" --db "$tmp/a.db"
expect_in "$tmp/err" "syntax.lua:2:"

printf 'local avo = require "avo"\n\nlocal function f()\n  return nil + 1\nend\nf()\n' > "$tmp/s/runtime.lua"
expect_exit 1 "$AVO" run "$tmp/s/runtime.lua" --db "$tmp/a.db"
expect_in "$tmp/err" "avo: $tmp/s/runtime.lua:4: attempt to perform arithmetic"
! grep -q "stack traceback:" "$tmp/err" || fail "a Lua traceback without --debug"
! grep -q "avo: avo:" "$tmp/err" || fail "doubled 'avo: avo:' prefix"
# --debug (or AVO_DEBUG=1) keeps the traceback.
expect_exit 1 "$AVO" run "$tmp/s/runtime.lua" --db "$tmp/a.db" --debug
expect_in "$tmp/err" "stack traceback:"
expect_in "$tmp/err" "runtime.lua:6:"
AVO_DEBUG=1 expect_exit 1 "$AVO" run "$tmp/s/runtime.lua" --db "$tmp/a.db"
expect_in "$tmp/err" "stack traceback:"

# An error inside a strategy option names the option, pointing at the script.
printf 'local avo = require "avo"\nreturn avo.strategy("ga").run{ evaluator = "cpu/sgemm", population = -1 }\n' > "$tmp/s/opt.lua"
expect_exit 1 "$AVO" run "$tmp/s/opt.lua" --db "$tmp/a.db"
expect_in "$tmp/err" "avo: $tmp/s/opt.lua: ga: option 'population' must be an integer >= 2, got -1"
! grep -q "session.lua" "$tmp/err" || fail "an option error names the engine, not the script"

# An evaluator with a missing field names the field.
printf 'return { name = "x", backend = "cpu" }\n' > "$tmp/s/ev.lua"
printf 'local avo = require "avo"\nlocal ev = avo.evaluator("%s")\n' "$tmp/s/ev.lua" > "$tmp/s/useev.lua"
expect_exit 1 "$AVO" run "$tmp/s/useev.lua" --db "$tmp/a.db"
expect_in "$tmp/err" "evaluator field 'description' is missing"

# An error in a spawned task that nobody joins fails the run with its location.
printf 'local avo = require "avo"\navo.spawn(function() error("lost task") end)\nlocal ev = avo.evaluator("tests/e2e/evaluators/axpy.lua")\navo.evaluate(ev, ev:seed())\n' > "$tmp/s/orphan.lua"
expect_exit 1 "$AVO" run "$tmp/s/orphan.lua" --db "$tmp/a.db"
expect_in "$tmp/err" "never joined"
expect_in "$tmp/err" "orphan.lua:2: lost task"

# A failed run is marked failed in the archive.
[ "$(q "$tmp/a.db" "SELECT status FROM runs ORDER BY id DESC LIMIT 1")" = failed ] || fail "run not marked failed"
echo "script_errors: ok"
