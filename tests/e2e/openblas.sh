#!/bin/sh
# A C library function as a CPU baseline (docs/evaluators.md, "Library
# baselines"): cpu/sgemm names OpenBLAS's cblas_sgemm, measured in the run
# by the same judge as the candidates, one thread, its version, core type
# and thread count recorded; the status line, summary, avo best, avo runs,
# the report and the exports show the best's ratio to it, per config too.
# A library that cannot be loaded, or lacks the symbol or a describe
# function, is `unavailable` with the reason in the summary, never skipped
# in silence.  In a run with two evaluators a candidate is compared only
# with its own evaluator's baselines (issue 21).
. "$(dirname "$0")/lib.sh"
db=$tmp/o.db
script=tests/e2e/openblas_run.lua

expect_exit 0 "$AVO" run $script --db "$db" --jobs 1
[ "$(q "$db" "SELECT name || ':' || status || ':' || library || ':' || evaluator FROM baselines")" = \
  "openblas:ok:libopenblas.so.0:sgemm" ] || fail "baseline rows: $(q "$db" "SELECT * FROM baselines")"
q "$db" "SELECT version FROM baselines" | grep -q "^OpenBLAS 0\.[0-9]" ||
    fail "the version is not OpenBLAS's config string: $(q "$db" "SELECT version FROM baselines")"
core=$(q "$db" "SELECT json_extract(result, '$.baseline.info.core') FROM baselines")
[ -n "$core" ] || fail "no OpenBLAS core type recorded"
[ "$(q "$db" "SELECT json_extract(result, '$.baseline.threads') || ',' ||
    json_extract(result, '$.baseline.threads_reported') || ',' || json_extract(result, '$.threads')
    FROM baselines")" = "1,1,1" ] || fail "not one thread: $(q "$db" "SELECT result FROM baselines")"
path=$(q "$db" "SELECT path FROM baselines")
[ -f "$path" ] || fail "the recorded library path '$path' is not a file"
[ "$(q "$db" "SELECT count(*) FROM candidates")" = 2 ] || fail "the baseline became a candidate"
[ "$(q "$db" "SELECT group_concat(DISTINCT evaluator) FROM candidates")" = sgemm ] ||
    fail "candidates do not record their evaluator"
# Every config verified against the reference, like a candidate.
[ "$(q "$db" "SELECT count(*) FROM baselines, json_each(json_extract(result, '$.configs'))
    WHERE json_extract(value, '$.correct') = 1")" = 6 ] || fail "OpenBLAS not verified on every config"

best=$(q "$db" "SELECT max(score) FROM candidates WHERE status = 'ok'")
blas=$(q "$db" "SELECT score FROM baselines")
ratio=$(python3 -c "import sys; print('%.2f' % (float(sys.argv[1]) / float(sys.argv[2])))" "$best" "$blas")
expect_in "$tmp/err" "${ratio}x openblas"
expect_in "$tmp/out" "baseline openblas (libopenblas.so.0 OpenBLAS 0."
expect_in "$tmp/out" "core $core, 1 thread, cpu): "
expect_in "$tmp/out" "best is ${ratio}x"
expect_in "$tmp/out" "  best per config: sq-512 "
expect_in "$tmp/out" ", odd-197x131x173 "
# Re-timed at the end with OpenBLAS in the same rounds: paired per round.
grep -q "^  1\. #[0-9]* .*x openblas \[[0-9.]*, [0-9.]*\]$" "$tmp/out" ||
    { cat "$tmp/out"; fail "no re-timed ratio to openblas"; }
expect_in "$tmp/out" "  baseline openblas in the same rounds: "
python3 - "$(q "$db" "SELECT data FROM events WHERE kind = 'retimed'")" <<'PY'
import json, sys
d = json.loads(sys.argv[1])
b = {x["name"]: x for x in d["baselines"]}
assert len(b["openblas"]["scores"]) == d["rounds"] == 3, d
for e in d["ranked"]:
    ratios = sorted(x / y for x, y in zip(e["scores"], b["openblas"]["scores"]))
    assert abs(e["vs"]["openblas"] - ratios[1]) < 1e-9, e
PY

recorded=$(q "$db" "SELECT id FROM candidates WHERE status = 'ok' ORDER BY score DESC, id LIMIT 1")
expect_exit 0 "$AVO" show "$recorded" --db "$db"
expect_in "$tmp/out" "this candidate ${ratio}x; per config sq-512 "
expect_in "$tmp/out" "  baseline openblas in the same rounds: "
expect_exit 0 "$AVO" runs --db "$db"
# (avo runs: the re-timed #1 and its paired ratio, from the retimed event.)
paired=$(q "$db" "SELECT data FROM events WHERE kind = 'retimed'" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print("%.2f" % [p for p in d["ranked"][0]["paired"] if p["against"] == sys.argv[1]][0]["median"])' openblas)
expect_in "$tmp/out" "${paired}x openblas paired"
expect_exit 0 "$AVO" report --db "$db" -o "$tmp/r.html"
first=$(q "$db" "SELECT json_extract(data, '$.ranked[0].id') FROM events WHERE kind = 'retimed'")
rratio=$(python3 -c "import sys; print('%.2f' % (float(sys.argv[1]) / float(sys.argv[2])))" \
    "$(q "$db" "SELECT score FROM candidates WHERE id = $first")" "$blas")
expect_in "$tmp/r.html" "${rratio}x openblas (the strongest baseline"
expect_in "$tmp/r.html" "<td>openblas</td><td>sgemm</td>"
expect_in "$tmp/r.html" "core $core"
expect_in "$tmp/r.html" "timed in the same rounds"
python3 -c 'import sys, xml.dom.minidom as m; m.parse(sys.argv[1])' "$tmp/r.html" ||
    fail "the report is not well-formed"
expect_exit 0 "$AVO" export --db "$db" --json "$tmp/e.json"
expect_exit 0 "$AVO" export --db "$db" --csv "$tmp/c.csv"
python3 - "$tmp/e.json" "$tmp/c.csv" "$blas" <<'PY'
import csv, json, sys
d = json.load(open(sys.argv[1]))
blas = float(sys.argv[3])
for c in d["candidates"]:
    assert c["evaluator"] == "sgemm", c
    r = c["vs_baselines"]["openblas"]
    assert abs(r["score"] - c["score"] / blas) < 1e-9 * r["score"], (r, c["score"])
    assert set(r["configs"]) == {"sq-512", "sq-640", "odd-197x131x173", "odd-383x271x445",
                                 "tall-4096x64x256", "small-64x64x64"}, r
rows = list(csv.DictReader(open(sys.argv[2], newline="")))
assert rows and all(r["evaluator"] == "sgemm" for r in rows), rows
for r in rows:
    name, value = r["vs_baselines"].split("=")
    assert name == "openblas" and float(value) > 0, r
PY

# The quickstart's summary prints its ratio to OpenBLAS.
expect_exit 0 "$AVO" run examples/quickstart.lua --db "$tmp/q.db" --jobs 1 generations=0 population=3 --retime 0
expect_in "$tmp/out" "baseline openblas (libopenblas.so.0 OpenBLAS"
expect_in "$tmp/out" ", best is "

# The variables that pick OpenBLAS's kernel and threads are avo's, whatever
# the environment says (issue 30): a user's OPENBLAS_CORETYPE=Haswell on an
# AVX-512 machine must not turn the comparison into one with the AVX2
# kernel. The core recorded is the one detected (the same as without the
# variable), the values avo set are recorded, and the baseline's line names
# what of the environment it did not use.
expect_exit 0 env OPENBLAS_CORETYPE=Haswell OPENBLAS_NUM_THREADS=4 OPENBLAS_VERBOSE=2 \
    "$AVO" run $script --db "$tmp/env.db" --jobs 1 --retime 0
[ "$(q "$tmp/env.db" "SELECT json_extract(result, '$.baseline.info.core') FROM baselines")" = "$core" ] ||
    fail "OPENBLAS_CORETYPE=Haswell changed the core: $(q "$tmp/env.db" "SELECT result FROM baselines")"
[ "$(q "$tmp/env.db" "SELECT json_extract(result, '$.baseline.environment.OPENBLAS_NUM_THREADS') || ',' ||
    json_extract(result, '$.baseline.environment.OPENBLAS_VERBOSE') || ',' ||
    json_extract(result, '$.baseline.threads_reported') || ',' ||
    json_extract(result, '$.baseline.env_overridden.OPENBLAS_CORETYPE') FROM baselines")" = "1,0,1,Haswell" ] ||
    fail "the environment avo set: $(q "$tmp/env.db" "SELECT result FROM baselines")"
q "$tmp/env.db" "SELECT json_extract(result, '$.baseline.environment_unset') FROM baselines" |
    grep -q '"OPENBLAS_CORETYPE"' || fail "OPENBLAS_CORETYPE not recorded as unset"
expect_in "$tmp/out" "core $core, 1 thread; OPENBLAS_CORETYPE=Haswell OPENBLAS_NUM_THREADS=4 OPENBLAS_VERBOSE=2 in the environment not used, cpu): "
# and without such variables, nothing is said
[ -z "$(q "$db" "SELECT json_extract(result, '$.baseline.env_overridden') FROM baselines")" ] ||
    fail "an override noted without cause: $(q "$db" "SELECT result FROM baselines")"

# A library that is not there, a symbol or describe function it lacks:
# unavailable, with the reason and the install hint, never compared with.
# (These runs, and the environment's above, re-time nothing at their end:
# --retime 0; the baseline's record is what they check.)
broken() {
    cat > "$tmp/ev.lua" <<LUA
local ev = dofile("$AVO_SOURCE_ROOT/evaluators/cpu/sgemm.lua")
local b = ev.baselines[1]
$1
return ev
LUA
}
broken 'b.library = "libavo-no-such-blas.so.3"'
OPENBLAS_EVALUATOR=$tmp/ev.lua expect_exit 0 "$AVO" run $script --db "$tmp/m.db" --jobs 1 --retime 0
expect_in "$tmp/out" "baseline openblas (cpu): unavailable (libavo-no-such-blas.so.3: cannot open shared object file"
expect_in "$tmp/out" "install it: apt-get install libopenblas0"
expect_in "$tmp/err" "openblas unavailable"
if grep -q "x openblas" "$tmp/err" "$tmp/out"; then fail "an unavailable baseline was compared with"; fi
[ "$(q "$tmp/m.db" "SELECT status || ':' || (score IS NULL) FROM baselines")" = "unavailable:1" ] ||
    fail "missing library: $(q "$tmp/m.db" "SELECT * FROM baselines")"
broken 'b.symbol = "cblas_nope"'
OPENBLAS_EVALUATOR=$tmp/ev.lua expect_exit 0 "$AVO" run $script --db "$tmp/s.db" --jobs 1 --retime 0
expect_in "$tmp/out" "unavailable (libopenblas.so.0 has no symbol 'cblas_nope'"
broken 'b.describe.core = "openblas_get_nothing"'
OPENBLAS_EVALUATOR=$tmp/ev.lua expect_exit 0 "$AVO" run $script --db "$tmp/d.db" --jobs 1 --retime 0
expect_in "$tmp/out" "has no function 'openblas_get_nothing' (describe.core)"
# An adapter that computes the wrong thing is wrong, like a candidate.
broken 'b.kernel = nil; b.source = "void cblas_sgemm(); void sgemm(int M, int N, int K, const float *A, const float *B, float *C) { for (int i = 0; i < M * N; i++) C[i] = 0; }"'
OPENBLAS_EVALUATOR=$tmp/ev.lua expect_exit 0 "$AVO" run $script --db "$tmp/w.db" --jobs 1 --retime 0
[ "$(q "$tmp/w.db" "SELECT status FROM baselines")" = wrong ] ||
    fail "a wrong adapter: $(q "$tmp/w.db" "SELECT status, reason FROM baselines")"

# Two evaluators in one run: each candidate only against its own
# evaluator's baselines, whichever evaluator holds the best.
OPENBLAS_SECOND=tests/e2e/evaluators/axpy_baselines.lua \
    expect_exit 0 "$AVO" run $script --db "$tmp/two.db" --jobs 1
cp "$tmp/out" "$tmp/two.out"
cp "$tmp/err" "$tmp/two.err"
[ "$(q "$tmp/two.db" "SELECT group_concat(evaluator || ':' || n) FROM (SELECT evaluator,
    count(*) AS n FROM candidates GROUP BY evaluator ORDER BY evaluator)")" = "axpy_baselines:1,sgemm:2" ] ||
    fail "candidates' evaluators: $(q "$tmp/two.db" "SELECT id, evaluator FROM candidates")"
best_ev=$(q "$tmp/two.db" "SELECT evaluator FROM candidates WHERE status = 'ok' ORDER BY score DESC, id LIMIT 1")
if [ "$best_ev" = sgemm ]; then mine=openblas other=plain other_ev=axpy_baselines
else mine=plain other=openblas other_ev=sgemm; fi
expect_in "$tmp/two.err" "x $mine"
if grep -q "x $other" "$tmp/two.err"; then fail "the status line compared the best with $other"; fi
expect_in "$tmp/two.out" "baseline $other (cpu): of evaluator $other_ev, not compared with the best (of $best_ev)"
expect_exit 0 "$AVO" best --db "$tmp/two.db"
expect_in "$tmp/out" ": of evaluator $other_ev, not this candidate's ($best_ev)"
expect_exit 0 "$AVO" runs --db "$tmp/two.db"
expect_in "$tmp/out" "x $mine"
expect_exit 0 "$AVO" report --db "$tmp/two.db" -o "$tmp/two.html"
expect_in "$tmp/two.html" "x $mine (the strongest baseline"
expect_in "$tmp/two.html" "another evaluator's"
expect_exit 0 "$AVO" export --db "$tmp/two.db" --json "$tmp/two.json"
python3 - "$tmp/two.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for c in d["candidates"]:
    own = {"sgemm": {"openblas"}, "axpy_baselines": {"plain"}}[c["evaluator"]]
    assert set(c["vs_baselines"]) <= own and c["vs_baselines"], c["vs_baselines"]
PY
echo "openblas: ok"
