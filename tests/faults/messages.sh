#!/bin/sh
# Clear messages for bad paths and errors without a message (issue 20,
# item 10): a directory given as the script, the kernel or the evaluator; a
# kernel path that is not UTF-8; error(nil) and error(false) in a script, in
# a task it spawned and in a strategy's callback point at the script's
# file:line (never at the engine's sched.lua), the run is recorded failed.
# No message is a Lua traceback.
. "$(dirname "$0")/lib.sh"
# no_traceback: $tmp/err holds no Lua traceback and no engine file
no_traceback() {
    if grep -q "stack traceback\|lua/avo/\|sched.lua\|bad argument" "$tmp/err"; then
        cat "$tmp/err"
        fail "a message shows the engine's internals"
    fi
}

# -- directories
expect_exit 2 "$AVO" run "$tmp" --db "$tmp/a.db"
expect_in "$tmp/err" "avo: cannot read script $tmp: Is a directory"
no_traceback
[ ! -e "$tmp/a.db" ] || fail "a directory as the script created the archive"
expect_exit 2 "$AVO" eval "$tmp" --evaluator cpu/sgemm
expect_in "$tmp/err" "avo eval: cannot read kernel $tmp: Is a directory"
no_traceback
expect_exit 1 "$AVO" eval kernels/cpu/sgemm.c --evaluator "$tmp"
expect_in "$tmp/err" "avo eval: evaluator $tmp cannot be read: $tmp: Is a directory"
no_traceback
printf 'return require("avo").strategy("ga").run{ evaluator = "%s", population = 2, generations = 1 }\n' \
    "$tmp" > "$tmp/ga.lua"
expect_exit 1 "$AVO" run "$tmp/ga.lua" --db "$tmp/b.db"
expect_in "$tmp/err" "evaluator $tmp cannot be read: $tmp: Is a directory"
no_traceback
# A missing file still says so.
expect_exit 2 "$AVO" eval "$tmp/none.c" --evaluator cpu/sgemm
expect_in "$tmp/err" "avo eval: cannot read kernel $tmp/none.c: No such file or directory"

# -- a kernel path that is not UTF-8
bad=$(printf '%s/k\377.c' "$tmp")
cp kernels/cpu/sgemm.c "$bad"
expect_exit 2 "$AVO" eval "$bad" --evaluator cpu/sgemm
expect_in "$tmp/err" "avo: the kernel path is not valid UTF-8 ('$tmp/k\\xff.c')"
no_traceback

# -- error(nil), error(false)
# run_fails SCRIPT LINE VALUE: the run fails naming SCRIPT:LINE and error(VALUE)
run_fails() {
    rm -f "$tmp/e.db"
    expect_exit 1 "$AVO" run "$1" --db "$tmp/e.db"
    expect_in "$tmp/err" "avo: $1:$2: error($3): an error was raised without a message"
    no_traceback
    [ "$(q "$tmp/e.db" "SELECT status FROM runs")" = failed ] || fail "$1: the run is not recorded failed"
}
printf 'local avo = require "avo"\n\nerror(nil)\n' > "$tmp/top.lua"
run_fails "$tmp/top.lua" 3 nil
printf 'local avo = require "avo"\nlocal t = avo.spawn(function()\n  error(false)\nend)\navo.join(t)\n' \
    > "$tmp/task.lua"
run_fails "$tmp/task.lua" 3 false
# inside a function the script defined, called after an evaluation
cat > "$tmp/after.lua" <<'EOF'
local avo = require "avo"
local ev = avo.evaluator("tests/lua/evaluators/synthetic.lua")
local function check(rec)
  if rec then error() end
end
check(avo.evaluate(ev, { source = ev.kernel_source, knobs = {} }))
EOF
run_fails "$tmp/after.lua" 4 nil
# ... and a pcall in the script still catches it as nil
cat > "$tmp/caught.lua" <<'EOF'
local ok, e = pcall(error, nil)
assert(not ok and e == nil)
EOF
expect_exit 0 "$AVO" run "$tmp/caught.lua" --db "$tmp/c.db"
echo "messages: ok"
