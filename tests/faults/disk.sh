#!/bin/sh
# Full and read-only disks, on small tmpfs mounts:
#  - a full or read-only compile cache is an infrastructure fault: the run
#    stops (exit 3) without charging any candidate, and resume with a working
#    cache finishes every evaluation;
#  - a full archive disk stops the run with SQLite's message, the archive
#    stays whole, and resume (with room) completes the same lineage;
#  - export (git, CSV, JSON), report and experiment report onto a full
#    disk fail with the reason and leave nothing half-made;
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
AVO_CACHE="$tmp/full/avo" expect_exit 3 "$AVO" run examples/quickstart.lua --db "$db" --jobs 1 --max-evals 12 --retime 0
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

# -- exports and reports onto a full disk: an error naming the reason, and
# nothing half-made left behind (no file, no temporary, no repository)
tmpfs "$tmp/xfull" 64k
dd if=/dev/zero of="$tmp/xfull/filler" bs=4k count=64 2>/dev/null || true
for out in "--git $tmp/xfull/repo" "--git $tmp/xfull/repo/" "--csv $tmp/xfull/x.csv" \
    "--json $tmp/xfull/x.json" "--csv $tmp/xfull/b.csv --what baselines"; do
    # shellcheck disable=SC2086 # the command's words
    expect_exit 1 "$AVO" export --db "$tmp/full.db" $out
    expect_in "$tmp/err" "No space left on device"
    [ "$(ls -A "$tmp/xfull")" = filler ] || fail "export $out on a full disk left: $(ls -A "$tmp/xfull")"
done
expect_exit 1 "$AVO" report --db "$tmp/full.db" -o "$tmp/xfull/r.html"
expect_in "$tmp/err" "No space left on device"
[ "$(ls -A "$tmp/xfull")" = filler ] || fail "report on a full disk left: $(ls -A "$tmp/xfull")"
# ... and an experiment's report (three files: all or none)
sed 's/seeds = 3/seeds = 1/; s/^  budgets = .*/  budgets = { { max_evals = 6 } },/' \
    tests/e2e/experiment/grid.lua >"$tmp/grid1.lua"
expect_exit 0 "$AVO" experiment "$tmp/grid1.lua" --db "$tmp/exp.db"
expect_exit 1 "$AVO" experiment report --db "$tmp/exp.db" --out "$tmp/xfull/rep"
expect_in "$tmp/err" "avo: cannot write $tmp/xfull/rep."
expect_in "$tmp/err" ": No space left on device"
[ "$(ls -A "$tmp/xfull")" = filler ] || fail "experiment report on a full disk left: $(ls -A "$tmp/xfull")"
expect_exit 0 "$AVO" experiment report --db "$tmp/exp.db" --out "$tmp/rep"
[ -s "$tmp/rep.html" ] && [ -s "$tmp/rep.csv" ] && [ -s "$tmp/rep.json" ] || fail "experiment report with room"
ls "$tmp" | grep -q '\.tmp\.' && fail "the experiment report left a temporary"
# ... into an existing empty directory (here the mount point of a disk too
# small for it): it is left empty, and with room the export fills it whole
tmpfs "$tmp/xsmall" 40k
expect_exit 1 "$AVO" export --db "$tmp/full.db" --git "$tmp/xsmall"
expect_in "$tmp/err" "No space left on device"
[ -z "$(ls -A "$tmp/xsmall")" ] || fail "git export into a full mount point left: $(ls -A "$tmp/xsmall")"
tmpfs "$tmp/xroom" 4m
expect_exit 0 "$AVO" export --db "$tmp/full.db" --git "$tmp/xroom"
[ "$(git -C "$tmp/xroom" rev-list --all --count)" = "$(q "$tmp/full.db" "SELECT count(*) FROM candidates")" ] ||
    fail "git export into an empty mount point: wrong commit count"
[ "$(ls -A "$tmp/xroom" | tr '\n' ' ')" = ".git kernel.c knobs.json scores.json " ] ||
    fail "git export into an empty mount point: $(ls -A "$tmp/xroom")"
[ -z "$(git -C "$tmp/xroom" status --porcelain)" ] || fail "the exported work tree differs from main"
expect_exit 0 "$AVO" export --db "$tmp/full.db" --git "$tmp/xroom/new"
[ "$(ls -A "$tmp/xroom" | grep -c tmp)" = 0 ] || fail "a temporary was left: $(ls -A "$tmp/xroom")"
[ "$(stat -c %a "$tmp/xroom/new")" = "$(umask -S >/dev/null; mkdir "$tmp/xroom/m"; stat -c %a "$tmp/xroom/m")" ] ||
    fail "the exported repository's mode is not what mkdir gives"

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
