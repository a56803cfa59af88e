#!/bin/sh
# Text from candidates and servers is inert on a terminal (issue 33): logs,
# reasons, notes and model answers printed in text mode show their escape
# sequences, C0/C1 controls, CRs and invalid UTF-8 as visible escapes; JSON
# output stays JSON with its own escaping.
. "$(dirname "$0")/lib.sh"
unset AVO_LLM_PROVIDER AVO_LLM_MODEL AVO_LLM_API_KEY AVO_LLM_BASE_URL AVO_LLM_REPLAY

# inert FILE: no ESC, no other C0 control but tab and newline, no DEL, no C1
# (raw or UTF-8 encoded), no CR, and valid UTF-8.
inert() {
    python3 - "$1" <<'PY' || { echo "--- $1"; cat -v "$1"; fail "$1 is not inert"; }
import re, sys
data = open(sys.argv[1], "rb").read()
bad = re.search(rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]", data)
if bad:
    sys.exit("raw control %r at byte %d" % (bad.group(), bad.start()))
data.decode("utf-8")
PY
}

ESC='\e]0;pwned\x07\e]52;c;ZWNobyBwd25lZA==\x07\e[2J'

# avo eval: a compile log and a crashing kernel's output.
python3 - "$tmp" <<'PY'
import sys
t = sys.argv[1]
evil = "\x1b]0;pwned\x07\x1b]52;c;ZWNobyBwd25lZA==\x07\x1b[2J\rstatus ok score 99999\u009b31m"
src = open("tests/e2e/kernels/axpy.c").read()
open(t + "/compile.c", "w").write('#error "%s"\n%s' % (evil, src))
c_evil = (evil.replace("\x1b", "\\033").replace("\x07", "\\a").replace("\r", "\\r")
          .replace("\u009b", "\\302\\233"))
open(t + "/abort.c", "w").write("#include <stdio.h>\n#include <stdlib.h>\n" + src.replace(
    "{", '{ fprintf(stderr, "%s\\377\\n"); fflush(stderr); abort();' % c_evil, 1))
PY
expect_exit 1 "$AVO" eval "$tmp/compile.c" --evaluator tests/e2e/evaluators/axpy.lua
inert "$tmp/out"; inert "$tmp/err"
expect_in "$tmp/out" "$ESC"
expect_exit 1 "$AVO" eval "$tmp/abort.c" --evaluator tests/e2e/evaluators/axpy.lua
inert "$tmp/out"; inert "$tmp/err"
expect_in "$tmp/out" "$ESC\\rstatus ok score 99999\\u009b31m"
# JSON stays JSON: the log as it was, escaped by the encoder.
expect_exit 1 "$AVO" eval "$tmp/abort.c" --evaluator tests/e2e/evaluators/axpy.lua --json
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert "\x1b]52;c;" in r["log"], r["log"]' "$tmp/out"

# A run: the model's answer logged and kept as a note, candidates whose
# compile log and run output carry the sequences.
printf '%s\n' '{"content": "done\u001b]0;pwned\u0007\u001b]52;c;ZWNobyBwd25lZA==\u0007\u001b[2J\rstatus ok score 99999\u009b31m"}' \
    > "$tmp/script.jsonl"
AVO_LLM_PROVIDER=scripted AVO_LLM_SCRIPT="$tmp/script.jsonl" \
    expect_exit 0 "$AVO" run tests/e2e/inert_run.lua --db "$tmp/run.db" --jobs 1
inert "$tmp/out"; inert "$tmp/err"
expect_in "$tmp/err" "model said: done$ESC\\rstatus ok score 99999\\u009b31m"
for id in 1 2; do
    expect_exit 0 "$AVO" show $id --db "$tmp/run.db" --source
    inert "$tmp/out"
    expect_in "$tmp/out" "note     "
done
expect_in "$tmp/out" "$ESC\\rstatus ok score 99999"
expect_exit 0 "$AVO" show 1 --db "$tmp/run.db" --json
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert "\x1b]0;pwned" in r["note"], r["note"]' "$tmp/out"
for cmd in "runs" "lineage 2" "best" "diff 1 2"; do
    # shellcheck disable=SC2086
    expect_exit 0 "$AVO" $cmd --db "$tmp/run.db"
    inert "$tmp/out"; inert "$tmp/err"
done
expect_exit 0 "$AVO" diff 1 3 --db "$tmp/run.db"
inert "$tmp/out"
expect_in "$tmp/out" "$ESC"
echo "inert: ok"
