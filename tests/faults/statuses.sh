#!/bin/sh
# Every way out of a script records a final status matching the exit code
# of the README's table, and prints one line without an engine traceback:
#  - avo.exit with a status a process cannot exit with (256, 1e12) is
#    refused (exit 1, `failed`), never truncated to 0;
#  - os.exit in a script ends the run as avo.exit does (`stopped`, its code);
#  - an error value whose __tostring fails, an --llm-replay archive that does
#    not open: exit 1, `failed`, one line;
#  - an evaluator with a negative, NaN or infinite tolerance or a config
#    whose i32 dimension overflows (M = 3000000000) is refused at load,
#    naming the file, the field and the value (exit 1, `failed`; avo eval 1).
# (The watchdog and second signals: signals.sh; replay --run: replay.sh.)
. "$(dirname "$0")/lib.sh"

# script BODY: a script that evaluates the seed, then runs BODY
script() {
    cat > "$tmp/s.lua" <<LUA
local avo = require "avo"
local ev = avo.evaluator("tests/lua/evaluators/synthetic.lua")
avo.evaluate(ev, ev:seed())
$1
LUA
}

# ends CODE STATUS TEXT BODY: the run of BODY exits CODE, is recorded
# STATUS, prints TEXT and no traceback
n=0
ends() {
    n=$((n + 1))
    script "$4"
    expect_exit "$1" "$AVO" run "$tmp/s.lua" --db "$tmp/e$n.db"
    got=$(q "$tmp/e$n.db" "SELECT status FROM runs")
    [ "$got" = "$2" ] || fail "$4: run recorded '$got', expected '$2'"
    expect_in "$tmp/err" "$3"
    ! grep -q "stack traceback" "$tmp/err" || { cat "$tmp/err"; fail "$4: a traceback"; }
}

ends 1 failed "s.lua:4: avo.exit: status must be an integer from 0 to 255, got 256" 'avo.exit(256, "x")'
ends 1 failed "avo.exit: status must be an integer from 0 to 255, got 1000000000000.0" \
    'avo.exit(1e12, "x")'
ends 1 failed "avo.exit: status must be an integer from 0 to 255, got -1" 'avo.exit(-1)'
ends 1 failed "avo.exit: message must be a string, got table" 'avo.exit(2, {})'
ends 4 stopped "four" 'avo.exit(4, "four")'
ends 0 stopped "s.lua:4: os.exit(0) ended the run" 'os.exit(0)'
ends 0 stopped "os.exit(0) ended the run" 'os.exit(true)'
ends 1 stopped "os.exit(1) ended the run" 'os.exit(false)'
ends 7 stopped "os.exit(7) ended the run" 'os.exit(7)'
ends 1 failed "os.exit: status must be true, false or an integer from 0 to 255, got 300" \
    'os.exit(300)'
ends 1 failed "avo: the error value (a table) cannot be shown: its __tostring failed: " \
    'error(setmetatable({}, { __tostring = function() error("tostring boom") end }))'
expect_in "$tmp/err" "tostring boom"
ends 1 failed "its __tostring failed: '__tostring' must return a string" \
    'error(setmetatable({}, { __tostring = function() return {} end }))'
# in a spawned task nobody joins
ends 1 failed "a task spawned with avo.spawn failed and was never joined: (an error value that cannot be shown)" \
    'avo.spawn(function() error(setmetatable({}, { __tostring = function() error("x") end })) end)
     avo.join(avo.spawn(function() end))'

# --llm-replay of an archive that is not there
expect_exit 1 "$AVO" run tests/lua/ga_synthetic.lua --db "$tmp/l.db" --llm-replay "$tmp/missing.db"
expect_in "$tmp/err" "avo: LLM replay: cannot open archive $tmp/missing.db: No such file or directory"
! grep -q "stack traceback" "$tmp/err" || fail "--llm-replay missing: a traceback"
[ "$(q "$tmp/l.db" "SELECT status FROM runs")" = failed ] || fail "--llm-replay missing: not 'failed'"
[ ! -e "$tmp/missing.db" ] || fail "--llm-replay created the missing archive"

# Evaluators refused at load: the shipped sgemm with one field broken.
bad_evaluator() { # NAME SED-EXPRESSION
    sed "$2" evaluators/cpu/sgemm.lua > "$tmp/$1.lua"
    cmp -s evaluators/cpu/sgemm.lua "$tmp/$1.lua" && fail "$1: the sed changed nothing"
    return 0
}
bad_evaluator atol 's/tolerance = { atol = 1e-3, rtol = 1e-3 }/tolerance = { atol = -1, rtol = 1e-3 }/'
bad_evaluator nan 's/tolerance = { atol = 1e-3, rtol = 1e-3 }/tolerance = { atol = 1e-3, rtol = 0 \/ 0 }/'
bad_evaluator inf 's/tolerance = { atol = 1e-3, rtol = 1e-3 }/tolerance = { atol = math.huge, rtol = 1e-3 }/'
bad_evaluator dims 's/{ name = "sq-512", M = 512,/{ name = "sq-512", M = 3000000000,/'
bad_evaluator type 's/tolerance = { atol = 1e-3, rtol = 1e-3 }/tolerance = { atol = "1e-3", rtol = 1e-3 }/'
cat > "$tmp/ev.lua" <<'LUA'
local avo = require "avo"
local args = ...
avo.evaluate(avo.evaluator(args.ev), { source = "int x;" })
LUA
for case in "atol:'tolerance.atol' must be a finite number >= 0, got -1" \
            "nan:'tolerance.rtol' must be a finite number >= 0, got " \
            "inf:'tolerance.atol' must be a finite number >= 0, got inf" \
            "dims:'args[1]' is 3000000000 for configs[1] (sq-512), out of range for i32" \
            "type:'tolerance.atol' must be a number, got string \"1e-3\""; do
    name=${case%%:*} text=${case#*:}
    expect_exit 1 "$AVO" run "$tmp/ev.lua" --db "$tmp/ev-$name.db" ev="$tmp/$name.lua"
    expect_in "$tmp/err" "$tmp/$name.lua: evaluator field $text"
    [ "$(q "$tmp/ev-$name.db" "SELECT status FROM runs")" = failed ] || fail "$name: run not 'failed'"
    [ "$(q "$tmp/ev-$name.db" "SELECT count(*) FROM candidates")" = 0 ] ||
        fail "$name: candidates were evaluated against a refused evaluator"
    expect_exit 1 "$AVO" eval kernels/cpu/sgemm.c --evaluator "$tmp/$name.lua"
    expect_in "$tmp/err" "$tmp/$name.lua: evaluator field $text"
done
echo "statuses: ok"
