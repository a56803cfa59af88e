#!/bin/sh
# The CUDA backend's compile cache, through `avo eval --compile-only` with
# NVRTC (no GPU needed): an entry is stored with its checksum and hit the
# second time; a tampered entry (its cubin rewritten, still valid JSON) is
# detected, never used, and rebuilt; an entry without its checksum (made
# before checksums) is rebuilt too; the cache folder is trimmed by least
# recent use to AVO_CACHE_MAX_MB.  Skips (77) when libnvrtc cannot be loaded.
. "$(dirname "$0")/lib.sh"
"$AVO" doctor >"$tmp/doctor" 2>&1 || fail "avo doctor exited non-zero"
if grep -q "^NVRTC *MISSING" "$tmp/doctor"; then
    echo "skip: $(grep '^NVRTC' "$tmp/doctor")"
    exit 77
fi
export AVO_CACHE="$tmp/cache"
unset AVO_CACHE_MAX_MB
dir=$AVO_CACHE/cuda

# compile SOURCE: compile-only for sm_80, the JSON result in $tmp/out
compile() {
    expect_exit 0 "$AVO" eval "$1" --evaluator cuda/gemm_f32 --compile-only --arch sm_80 --json
}
# result KEY: the result's top-level KEY ("hit" and "repaired" as 1/0)
result() {
    python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
v = {"hit": r["compile"]["cache_hit"], "repaired": r.get("cache_repaired", False),
     "status": r["status"]}[sys.argv[2]]
print(int(v) if isinstance(v, bool) else v)' "$tmp/out" "$1"
}
entries() { (cd "$dir" && ls -- *.json 2>/dev/null) | LC_ALL=C sort | tr '\n' ' '; }

# stored with its sum, then hit
cp kernels/cuda/gemm.cu "$tmp/a.cu"
compile "$tmp/a.cu"
[ "$(result hit)$(result repaired)" = 00 ] || fail "first compile: hit/repaired $(result hit)$(result repaired)"
a=$(entries)
[ -n "$a" ] && [ "$(echo "$a" | wc -w)" -eq 1 ] || fail "expected one cache entry, found '$a'"
a=${a% }
[ -f "$dir/$a.sum" ] || fail "entry $a has no checksum"
[ "$(git hash-object "$dir/$a")" = "$(cat "$dir/$a.sum")" ] || fail "the checksum of $a is not its blob id"
compile "$tmp/a.cu"
[ "$(result hit)" = 1 ] || fail "second compile missed the cache"

# tampered: the cubin of another kernel, the JSON still valid -> rebuilt
{ cat kernels/cuda/gemm.cu; echo 'extern "C" __global__ void other(float *p) { p[0] = 1.0f; }'; } >"$tmp/other.cu"
compile "$tmp/other.cu"
other=$(entries | tr ' ' '\n' | grep -v "^$a\$" | head -1)
python3 -c '
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
a["cubin"] = b["cubin"]
json.dump(a, open(sys.argv[1], "w"))' "$dir/$a" "$dir/$other"
tampered=$(git hash-object "$dir/$a")
compile "$tmp/a.cu"
[ "$(result status)" = ok ] || fail "a tampered entry made the compile fail"
[ "$(result hit)$(result repaired)" = 01 ] || fail "tampered entry: hit/repaired $(result hit)$(result repaired)"
[ "$(git hash-object "$dir/$a")" != "$tampered" ] || fail "the tampered entry is still there"
[ "$(git hash-object "$dir/$a")" = "$(cat "$dir/$a.sum")" ] || fail "the rebuilt entry does not match its checksum"
compile "$tmp/a.cu"
[ "$(result hit)$(result repaired)" = 10 ] || fail "rebuilt entry: hit/repaired $(result hit)$(result repaired)"

# an entry without its checksum is rebuilt
rm "$dir/$a.sum"
compile "$tmp/a.cu"
[ "$(result hit)$(result repaired)" = 01 ] || fail "sum-less entry: hit/repaired $(result hit)$(result repaired)"
[ -f "$dir/$a.sum" ] || fail "the rebuilt entry has no checksum"

# trimmed by least recent use: room (90% of the bound) for two entries of
# this size, not three; entry mtimes have one-second steps
rm -f "$dir"/*
for v in 1 2 3; do
    { cat kernels/cuda/gemm.cu; echo "// variant $v"; } >"$tmp/v$v.cu"
done
compile "$tmp/v1.cu"
e1=$(entries)
size=$(stat -c %s "$dir/${e1% }")
export AVO_CACHE_MAX_MB=$(python3 -c "print($size * 2.5 / 0.9 / 1048576)")
sleep 1.1
compile "$tmp/v2.cu"
e12=$(entries)
[ "$(echo "$e12" | wc -w)" -eq 2 ] || fail "two entries fit the bound, found '$e12'"
sleep 1.1
compile "$tmp/v1.cu" # a hit: v1 is now the most recently used
[ "$(result hit)" = 1 ] || fail "v1 missed the cache"
sleep 1.1
compile "$tmp/v3.cu"
left=$(entries)
[ "$(echo "$left" | wc -w)" -eq 2 ] || fail "the cache holds '$left', not two entries"
echo "$left" | grep -q "${e1% }" || fail "the recently used entry was evicted: '$left' lacks $e1"
e2=$(echo "$e12" | tr ' ' '\n' | grep -v "^${e1% }\$" | head -1)
echo "$left" | grep -q "$e2" && fail "the least recently used entry $e2 was kept: '$left'"
[ -f "$dir/$e2.sum" ] && fail "the evicted entry's checksum was left"
[ "$(ls "$dir" | grep -c '\.sum$')" -eq 2 ] || fail "checksums left: $(ls "$dir")"
echo "ok: tampered and sum-less entries rebuilt, trimmed to '$left'"
