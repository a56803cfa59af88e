#!/bin/sh
# The BLAS-style sgemm seed against OpenBLAS: runs avo's search
# (examples/sgemm_fast.lua, at most EVALS evaluations), then times the best it
# found against OpenBLAS's cblas_sgemm on one thread, alternating the two in
# one process (bench/sgemm_vs_openblas.c), in PROCS processes of ROUNDS rounds
# each, at 256^3, 512^3 and 1024^3; then the seed kernel the same way, for
# what the search added. Prints each process's medians and, per size, the
# median ratio kernel / OpenBLAS over the processes. Timing is by the
# thread's CPU time (waiting for a CPU on a shared machine is not counted);
# the ratio by wall time is printed beside it. Needs libopenblas-dev
# (tools/install-deps).
#
#   meson compile -C build bench-sgemm     or
#   bench/sgemm_vs_openblas.sh build/avo [EVALS] [SEED] [ROUNDS] [PROCS]
#
# Ratios measured in one run, not assertions; docs/benchmarks.md records them.
set -eu
avo=$(realpath "$1")
evals=${2:-300}
seed=${3:-1}
rounds=${4:-11}
procs=${5:-3}
cd "$(dirname "$0")/.."
root=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export AVO_CACHE="${AVO_CACHE:-$tmp/cache}"
cc=${CC:-cc}

if ! printf '#include <cblas.h>\nint main(void){return 0;}\n' |
        $cc -x c - -o "$tmp/probe" -lopenblas 2>/dev/null; then
    echo "sgemm_vs_openblas: OpenBLAS is missing (cblas.h, -lopenblas): run tools/install-deps" >&2
    exit 1
fi

echo "search: avo run examples/sgemm_fast.lua --max-evals $evals --seed $seed"
"$avo" run examples/sgemm_fast.lua --db "$tmp/run.db" --seed "$seed" --max-evals "$evals" \
    > "$tmp/run.log" 2>&1 || { cat "$tmp/run.log" >&2; exit 1; }
tail -n 4 "$tmp/run.log"; echo
id=$("$avo" best --db "$tmp/run.db" --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["id"])')
"$avo" show "$id" --db "$tmp/run.db" --source --json > "$tmp/best.json"

# The best's own source (an operator may have edited it) and its knobs as -D flags.
python3 - "$tmp/best.json" "$tmp/best.c" "$tmp/flags" <<'PY'
import json, sys
best = json.load(open(sys.argv[1]))
open(sys.argv[2], "w").write(best["source"])
knobs = best.get("knobs") or {}
open(sys.argv[3], "w").write(" ".join(f"-D{k}={v}" for k, v in sorted(knobs.items())))
print(f"best #{best['id']} ({best['operator']}): {best['score']:.1f} GFLOP/s in the search;",
      " ".join(f"{k}={v}" for k, v in sorted(knobs.items())))
PY
# shellcheck disable=SC2046
$cc -O3 -march=native $(cat "$tmp/flags") -DKERNEL="\"$tmp/best.c\"" \
    bench/sgemm_vs_openblas.c -o "$tmp/best" -lopenblas -lm
# The seed as shipped, for what the search added.
$cc -O3 -march=native -DKERNEL="\"$root/kernels/cpu/sgemm_fast.c\"" \
    bench/sgemm_vs_openblas.c -o "$tmp/seed" -lopenblas -lm

for kernel in best seed; do
    : > "$tmp/$kernel.lines"
    for p in $(seq 1 "$procs"); do
        echo "$kernel, process $p:"
        "$tmp/$kernel" "$rounds" 256 512 1024 | tee -a "$tmp/$kernel.lines"
    done
done
python3 - "$tmp" "$evals" "$procs" "$rounds" <<'PY'
import re, statistics, sys
tmp, evals, procs, rounds = sys.argv[1:]
print(f"vs OpenBLAS (1 thread), medians over {procs} processes x {rounds} rounds:")
for kernel, title in (("best", f"best of {evals} evaluations"), ("seed", "seed (no search)")):
    ratios = {}
    for line in open(f"{tmp}/{kernel}.lines"):
        m = re.match(r"(\d+)\^3: kernel ([\d.]+) GFLOP/s, openblas ([\d.]+) GFLOP/s, ratio ([\d.]+)", line)
        if m:
            ratios.setdefault(int(m[1]), []).append((float(m[2]), float(m[3]), float(m[4])))
    print(f"{title}:")
    for n, rows in sorted(ratios.items()):
        k = statistics.median(r[0] for r in rows)
        o = statistics.median(r[1] for r in rows)
        q = statistics.median(r[2] for r in rows)
        print(f"  {n}^3: {k:.1f} vs {o:.1f} GFLOP/s, ratio {q:.3f} "
              f"(processes: {', '.join(f'{r[2]:.3f}' for r in rows)})")
PY
