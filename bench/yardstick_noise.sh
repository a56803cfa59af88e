#!/bin/sh
# How far apart evaluations of one kernel land, unpaired (GFLOP/s) and paired
# (its speed-up over the seed timed beside it in the judge, timing.yardstick):
# N evaluations of KERNEL with cpu/sgemm_fast (or EVALUATOR) in each of three
# conditions: pinned (the default: judge and kernel on one CPU no other judge
# holds), unpinned (AVO_CPU_PIN=0), and two evaluations at a time (pinned, as
# a search with --jobs 2 runs them). Per config and for the score: the median
# over the evaluations and their spread (max/min, and the median absolute
# deviation over the median). What the search can tell apart is below the
# spread of the figure it compares (docs/benchmarks.md).
#
#   bench/yardstick_noise.sh build/avo [N=8] [KERNEL] [EVALUATOR] ["KNOB=V KNOB=V ..."]
#
# The seed against itself is the easy case (the same code meets the same
# conditions); give another kernel or knob set to see the spread of a
# candidate the search would compare.
set -eu
avo=$(realpath "$1")
n=${2:-8}
kernel=${3:-kernels/cpu/sgemm_fast.c}
evaluator=${4:-cpu/sgemm_fast}
params=
for kv in ${5:-}; do params="$params --param $kv"; done
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export AVO_CACHE="${AVO_CACHE:-$tmp/cache}"
one() { # OUT [env...]: one evaluation's JSON into OUT
    out=$1; shift
    # shellcheck disable=SC2086
    env "$@" "$avo" eval "$kernel" --evaluator "$evaluator" $params --json > "$out" 2> "$out.err" ||
        { cat "$out.err" >&2; exit 1; }
}
# shellcheck disable=SC2086
"$avo" eval "$kernel" --evaluator "$evaluator" $params --json > /dev/null 2>&1 # the compile, cached
for i in $(seq 1 "$n"); do
    one "$tmp/pinned.$i"
    one "$tmp/unpinned.$i" AVO_CPU_PIN=0
    one "$tmp/two.a.$i" & one "$tmp/two.b.$i"; wait
done
python3 - "$tmp" "$n" "${5:-}" <<'PY'
import glob, json, math, os, statistics, sys
tmp, n = sys.argv[1], int(sys.argv[2])
def load(pattern):
    return [json.load(open(p)) for p in sorted(glob.glob(os.path.join(tmp, pattern)))
            if not p.endswith(".err")]
def spread(xs):
    med = statistics.median(xs)
    mad = statistics.median(abs(x - med) for x in xs)
    return med, max(xs) / min(xs), mad / med
def geo(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))
print(f"{n} evaluations per condition; median, max/min, MAD/median"
      + (f"; knobs {sys.argv[3]}" if len(sys.argv) > 3 and sys.argv[3] else ""))
for cond, pattern in (("pinned", "pinned.*"), ("unpinned (AVO_CPU_PIN=0)", "unpinned.*"),
                      ("two at a time, pinned", "two.*")):
    rs = load(pattern)
    assert all(r["status"] == "ok" for r in rs), [r.get("reason") for r in rs]
    print(f"\n{cond}: {len(rs)} evaluations"
          + (f", CPUs {sorted(set(r['cpu'] for r in rs if 'cpu' in r))}" if any('cpu' in r for r in rs) else ""))
    print(f"  {'config':<18} {'GFLOP/s':>8} {'max/min':>8} {'MAD':>6}   {'x seed':>7} {'max/min':>8} {'MAD':>6}")
    names = [c["name"] for c in rs[0]["configs"]]
    for name in names + ["geo-mean"]:
        if name == "geo-mean":
            g = [geo([c["gflops"] for c in r["configs"]]) for r in rs]
            p = [geo([c["vs_yardstick"] for c in r["configs"]]) for r in rs]
        else:
            g = [next(c["gflops"] for c in r["configs"] if c["name"] == name) for r in rs]
            p = [next(c["vs_yardstick"] for c in r["configs"] if c["name"] == name) for r in rs]
        gm, gr, gd = spread(g)
        pm, pr, pd = spread(p)
        print(f"  {name:<18} {gm:8.1f} {gr:8.3f} {gd:6.1%}   {pm:7.3f} {pr:8.3f} {pd:6.1%}")
PY
