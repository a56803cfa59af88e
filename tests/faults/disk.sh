#!/bin/sh
# Full and read-only disks, on small tmpfs mounts:
#  - a full or read-only compile cache is an infrastructure fault: the run
#    stops (exit 3) without charging any candidate, and resume with a working
#    cache finishes every evaluation;
#  - a full archive disk stops the run with SQLite's message, the archive
#    stays whole, and resume (with room) completes the same lineage;
#  - an archive on a read-only mount is readable by every read command,
#    older schemas included, and resume is refused clearly.
. "$(dirname "$0")/lib.sh"
need_mount
mounts=""
cleanup() {
    for m in $mounts; do umount "$m" 2>/dev/null || true; done
    rm -rf "$tmp"
}
trap cleanup EXIT
# tmpfs DIR SIZE: a fresh tmpfs of that size at DIR
tmpfs() { mkdir -p "$1"; mount -t tmpfs -o "size=$2" tmpfs "$1"; mounts="$1 $mounts"; }

# -- compile cache on a full disk
tmpfs "$tmp/full" 64k
dd if=/dev/zero of="$tmp/full/filler" bs=4k count=64 2>/dev/null || true
db="$tmp/cache.db"
AVO_CACHE="$tmp/full/avo" expect_exit 3 "$AVO" run examples/quickstart.lua --db "$db" --jobs 1 --max-evals 12
expect_in "$tmp/err" "infrastructure fault, not the candidate's"
expect_in "$tmp/err" "the environment is broken: 5 infrastructure faults in a row"
expect_in "$tmp/err" "No space left on device"
[ "$(q "$db" "SELECT status FROM runs")" = failed ] || fail "full cache: run not failed"
[ "$(q "$db" "SELECT count(*) FROM candidates WHERE status <> 'pending'")" = 0 ] ||
    fail "full cache: a candidate was charged with the environment's fault"
expect_exit 0 "$AVO" resume --db "$db" --jobs 1
[ "$(q "$db" "SELECT count(*) FROM candidates WHERE status NOT IN ('ok', 'wrong')")" = 0 ] ||
    fail "resume with a working cache left candidates failed or pending"

# -- compile cache on a read-only mount
tmpfs "$tmp/rocache" 1m
mount -o remount,ro "$tmp/rocache"
AVO_CACHE="$tmp/rocache" expect_exit 3 "$AVO" run examples/quickstart.lua --db "$tmp/ro.db" --jobs 1 --max-evals 12
expect_in "$tmp/err" "Read-only file system"
[ "$(q "$tmp/ro.db" "SELECT count(*) FROM candidates WHERE status <> 'pending'")" = 0 ] ||
    fail "read-only cache: a candidate was charged with the environment's fault"

# -- archive on a full disk
expect_exit 0 "$AVO" run tests/lua/ga_synthetic.lua --db "$tmp/full.db" --seed 2
lineage "$tmp/full.db" > "$tmp/full.txt"
tmpfs "$tmp/small" 300k
set +e
"$AVO" run tests/lua/ga_synthetic.lua --db "$tmp/small/a.db" --seed 2 >"$tmp/out" 2>"$tmp/err"
got=$?
set -e
[ "$got" = 1 ] || { cat "$tmp/err"; fail "archive on a full disk: exit $got, expected 1"; }
expect_in "$tmp/err" "database or disk is full"
mkdir "$tmp/big"
cp "$tmp/small"/a.db* "$tmp/big/"
whole "$tmp/big/a.db"
[ "$(q "$tmp/big/a.db" "SELECT count(*) FROM candidates WHERE status <> 'pending'")" -ge 1 ] ||
    fail "nothing was written before the disk was full"
expect_exit 0 "$AVO" resume --db "$tmp/big/a.db"
lineage "$tmp/big/a.db" > "$tmp/big.txt"
cmp -s "$tmp/full.txt" "$tmp/big.txt" || fail "lineage after a full disk and resume differs"

# -- a finished archive on a read-only mount, and an older schema there
tmpfs "$tmp/ro" 4m
cp "$tmp/full.db" "$tmp/ro/run.db"
sqlite3 "$tmp/ro/v1.db" < tests/unit/fixtures/archive-v1.sql
mount -o remount,ro "$tmp/ro"
expect_exit 0 "$AVO" runs --db "$tmp/ro/run.db";     expect_in "$tmp/out" "done"
expect_exit 0 "$AVO" best --db "$tmp/ro/run.db"
expect_exit 0 "$AVO" show 1 --db "$tmp/ro/run.db" --source
expect_exit 0 "$AVO" lineage 5 --db "$tmp/ro/run.db"
expect_exit 0 "$AVO" diff 1 5 --db "$tmp/ro/run.db"
expect_exit 0 "$AVO" export --db "$tmp/ro/run.db" --csv "$tmp/e.csv"
expect_exit 0 "$AVO" export --db "$tmp/ro/run.db" --json "$tmp/e.json"
expect_exit 0 "$AVO" report --db "$tmp/ro/run.db" -o "$tmp/r.html"
expect_exit 0 "$AVO" runs --db "$tmp/ro/v1.db";      expect_in "$tmp/out" "done"
expect_exit 0 "$AVO" best --db "$tmp/ro/v1.db" --json
[ "$(sqlite3 "$tmp/ro/v1.db" "PRAGMA user_version")" = 1 ] || fail "the read-only v1 archive changed"
expect_exit 1 "$AVO" resume --db "$tmp/ro/run.db"
expect_in "$tmp/err" "avo: archive $tmp/ro/run.db is read-only (Read-only file system)"
expect_exit 1 "$AVO" run tests/lua/ga_synthetic.lua --db "$tmp/ro/run.db"
expect_in "$tmp/err" "is read-only"
echo "disk: ok"
