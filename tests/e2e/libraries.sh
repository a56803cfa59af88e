#!/bin/sh
# Vendor code inside a candidate is visible (issue 33): a kernel that
# dlopens OpenBLAS at run time scores like OpenBLAS, and the judge, reading
# the kernel process's mappings from outside after the timed calls
# (eval/libraries.h), names the library in the result; `avo eval`, the
# archive, `avo show` and the report say so; an ordinary kernel names none.
# An evaluator's `libraries = "forbid"` makes such a kernel invalid, with
# the library in the reason; an allow-list lets the named libraries pass and
# refuses the others; a malformed rule is refused when the evaluator loads.
. "$(dirname "$0")/lib.sh"
[ -e /usr/lib/x86_64-linux-gnu/libopenblas.so.0 ] || ldconfig -p | grep -q libopenblas.so.0 ||
    { echo "skip: libopenblas.so.0 is not installed (apt-get install libopenblas0)"; exit 77; }
ev=tests/e2e/evaluators/mm_libraries.lua
blas=tests/e2e/kernels/mm_openblas.c
honest=tests/integrity/kernels/honest.c

# libraries LABEL FILE: the "libraries" list of `avo eval --json`, one per line
libraries() {
    python3 -c "import json, sys; r = json.load(open(sys.argv[1]));
assert 'libraries' in r, 'no libraries field: %s' % sorted(r)
print('\n'.join(r['libraries']))" "$1"
}

# --- by default: noted, not judged
unset MM_LIBRARIES
expect_exit 0 "$AVO" eval "$blas" --evaluator "$ev" --json
cp "$tmp/out" "$tmp/blas.json"
libraries "$tmp/blas.json" | grep -q '/libopenblas[^/]*\.so' ||
    fail "the OpenBLAS kernel's result does not name OpenBLAS: $(cat "$tmp/blas.json")"
expect_exit 0 "$AVO" eval "$honest" --evaluator "$ev" --json
[ -z "$(libraries "$tmp/out")" ] || fail "the honest kernel names libraries: $(libraries "$tmp/out")"
expect_exit 0 "$AVO" eval "$blas" --evaluator "$ev"
expect_in "$tmp/out" "libraries "
grep '^libraries ' "$tmp/out" | grep -q libopenblas || fail "avo eval's text does not name OpenBLAS"

# --- kept in the archive, shown by avo show and the report
db=$tmp/l.db
expect_exit 0 "$AVO" run tests/e2e/libraries_run.lua --db "$db" --jobs 1
[ "$(q "$db" "SELECT count(*) FROM candidates WHERE status = 'ok'")" = 2 ] ||
    fail "both kernels should pass: $(q "$db" "SELECT id, status, reason FROM candidates")"
q "$db" "SELECT json_extract(result, '$.libraries') FROM candidates WHERE id = 2" | grep -q libopenblas ||
    fail "the archive lacks the library: $(q "$db" "SELECT id, result FROM candidates")"
[ "$(q "$db" "SELECT json_array_length(json_extract(result, '$.libraries')) FROM candidates WHERE id = 1")" = 0 ] ||
    fail "the honest candidate's archived libraries are not empty"
expect_exit 0 "$AVO" show 2 --db "$db"
grep '^libraries ' "$tmp/out" | grep -q libopenblas || { cat "$tmp/out"; fail "avo show does not name OpenBLAS"; }
expect_exit 0 "$AVO" show 1 --db "$db"
expect_in "$tmp/out" "libraries none beyond its object and the runtime"
expect_exit 0 "$AVO" report --db "$db" --out "$tmp/r.html"
grep -q 'libraries <code>[^<]*libopenblas' "$tmp/r.html" || fail "the report does not name OpenBLAS"

# --- forbidden: invalid, the library named; an ordinary kernel still passes
export MM_LIBRARIES=forbid
expect_exit 1 "$AVO" eval "$blas" --evaluator "$ev" --json
python3 - "$tmp/out" <<'PY' || fail "forbid: $(cat "$tmp/out")"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["status"] == "invalid", r["status"]
assert r["reason"].startswith("loads a library the evaluator forbids"), r["reason"]
assert "libopenblas" in r["reason"], r["reason"]
PY
expect_exit 0 "$AVO" eval "$honest" --evaluator "$ev" --json

# --- an allow-list: what it names passes, anything else is refused
export MM_LIBRARIES=libopenblas,libgfortran
expect_exit 0 "$AVO" eval "$blas" --evaluator "$ev" --json
export MM_LIBRARIES=libfoo
expect_exit 1 "$AVO" eval "$blas" --evaluator "$ev" --json
expect_in "$tmp/out" "loads a library the evaluator does not allow"

# --- the rule is for candidates: an evaluator that forbids libraries still
# measures its OpenBLAS library baseline (the baseline's result names it)
cat > "$tmp/sgemm_forbid.lua" <<LUA
local ev = dofile("$AVO_SOURCE_ROOT/evaluators/cpu/sgemm.lua")
ev.libraries = "forbid"
return ev
LUA
OPENBLAS_EVALUATOR=$tmp/sgemm_forbid.lua expect_exit 0 "$AVO" run tests/e2e/openblas_run.lua \
    --db "$tmp/b.db" --jobs 1
[ "$(q "$tmp/b.db" "SELECT status FROM baselines")" = ok ] ||
    fail "the baseline of a forbidding evaluator: $(q "$tmp/b.db" "SELECT status, reason FROM baselines")"
q "$tmp/b.db" "SELECT json_extract(result, '$.libraries') FROM baselines" | grep -q libopenblas ||
    fail "the baseline's result does not name OpenBLAS: $(q "$tmp/b.db" "SELECT result FROM baselines")"
[ "$(q "$tmp/b.db" "SELECT count(*) FROM candidates WHERE status = 'ok'")" = 2 ] ||
    fail "the seed candidates should pass: $(q "$tmp/b.db" "SELECT status, reason FROM candidates")"

# --- a malformed rule, and one on a CUDA evaluator, are refused at load
export MM_LIBRARIES=bad
expect_exit 1 "$AVO" eval "$honest" --evaluator "$ev"
expect_in "$tmp/err" "libraries"
expect_in "$tmp/err" "must be \"allow\", \"forbid\" or a list of file name prefixes"
unset MM_LIBRARIES
cat > "$tmp/cuda_forbid.lua" <<LUA
local ev = dofile("$AVO_SOURCE_ROOT/tests/e2e/evaluators/cuda_vadd.lua")
ev.libraries = "forbid"
return ev
LUA
expect_exit 1 "$AVO" eval tests/e2e/kernels/cuda_vadd.cu --evaluator "$tmp/cuda_forbid.lua" --compile-only
expect_in "$tmp/err" "applies to CPU kernels only"
echo "libraries: ok"
