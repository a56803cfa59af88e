#!/bin/sh
# Archives in odd states on disk (issue 20, items 2 and 3):
#  - a read-only archive whose data sits in its -wal with no -shm (a killed
#    run, then a copy or a chmod) is read whole by every read command, never
#    shown as empty, and nothing is made beside it; where the private copy
#    cannot be made, the refusal says why;
#  - a non-root owner reading a file of theirs after chmod a-w leaves no
#    -wal/-shm behind (SQLite would make them mode 0444), so their next run
#    into it works;
#  - read commands refuse an empty file, a knowledge base alone and a
#    foreign database, and leave them exactly as they were;
#  - avo run and avo resume refuse an archive failing PRAGMA quick_check,
#    naming it and what to do, without writing to it; the read commands
#    warn (stderr) naming it and quick_check's answer, and show what they
#    can; the README's way to copy what it holds into a new file works.
# The reads as another user run under setpriv as nobody: needs root.
. "$(dirname "$0")/lib.sh"
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
    echo "skip: the reads as a non-root owner need root and setpriv (util-linux)"
    exit 77
fi
chmod 755 "$tmp"
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
if ! as_nobody test -x "$AVO" -a -r "$AVO_SOURCE_ROOT/tests/lua/ga_synthetic.lua"; then
    echo "skip: uid 65534 (nobody) cannot reach the build or checkout at $AVO_SOURCE_ROOT (a directory on the way is closed to other users, as /root is): the runs and reads as another user need a checkout every user can read"
    exit 77
fi
# expect_exit_nobody CODE CMD...: expect_exit, as nobody
expect_exit_nobody() { code=$1; shift; expect_exit "$code" as_nobody "$@"; }
# side_files DIR: the names in DIR, one line
side_files() { ls -A "$1" | tr '\n' ' '; }

# -- data in -wal, no -shm, nothing may be made beside it
mkdir "$tmp/w"
AVO_TEST_SLOW_MS=40 "$AVO" run tests/lua/ga_synthetic.lua --db "$tmp/w/a.db" >/dev/null 2>&1 &
pid=$!
wait_for "$tmp/w/a.db" "SELECT count(*) >= 8 FROM candidates WHERE status <> 'pending'"
kill -9 "$pid"; wait "$pid" 2>/dev/null || true
[ -s "$tmp/w/a.db-wal" ] || fail "the killed run left no WAL"
rm "$tmp/w/a.db-shm"
# What it holds, read by root from a writable copy.
mkdir "$tmp/ref"
cp "$tmp/w/a.db" "$tmp/w/a.db-wal" "$tmp/ref/"
held=$(q "$tmp/ref/a.db" "SELECT count(*) FROM candidates")
[ "$held" -ge 8 ] || fail "the reference copy holds $held candidates"
"$AVO" export --db "$tmp/ref/a.db" --csv "$tmp/want.csv" 2>/dev/null
chmod 555 "$tmp/w"
mkdir "$tmp/tmpdir" && chown nobody "$tmp/tmpdir"
export TMPDIR="$tmp/tmpdir"
before=$(side_files "$tmp/w")
expect_exit_nobody 0 "$AVO" runs --db "$tmp/w/a.db"
expect_in "$tmp/out" "running"
grep -q "no runs" "$tmp/out" && fail "an archive with its data in -wal was shown as empty"
expect_exit_nobody 0 "$AVO" runs --db "$tmp/w/a.db" --json
expect_in "$tmp/out" "\"candidates\": $held"
expect_exit_nobody 0 "$AVO" export --db "$tmp/w/a.db" --csv -
cmp -s "$tmp/want.csv" "$tmp/out" || fail "the export of an archive read through its -wal differs"
expect_exit_nobody 0 "$AVO" best --db "$tmp/w/a.db"
expect_exit_nobody 0 "$AVO" report --db "$tmp/w/a.db" -o "$tmp/tmpdir/r.html"
rm "$tmp/tmpdir/r.html"
[ "$(side_files "$tmp/w")" = "$before" ] || fail "files were made beside the archive: $(side_files "$tmp/w")"
[ -z "$(ls -A "$tmp/tmpdir")" ] || fail "the private copy was left behind: $(ls -A "$tmp/tmpdir")"
# Where the private copy cannot be made: refused, saying why; never empty.
chmod 555 "$tmp/tmpdir"
expect_exit_nobody 1 "$AVO" runs --db "$tmp/w/a.db"
expect_in "$tmp/err" "archive $tmp/w/a.db has its data in $tmp/w/a.db-wal, which cannot be read in place"
expect_in "$tmp/err" "cannot make a directory in $tmp/tmpdir: Permission denied"
chmod 755 "$tmp/tmpdir"
unset TMPDIR
# The same archive on a mount nobody writes, read by root, where a tmpfs
# can be mounted.
if mount -t tmpfs -o size=4m tmpfs "$tmp/ref" 2>/dev/null; then
    cp "$tmp/w/a.db" "$tmp/w/a.db-wal" "$tmp/ref/"
    mount -o remount,ro "$tmp/ref"
    set +e; "$AVO" runs --db "$tmp/ref/a.db" --json >"$tmp/out" 2>"$tmp/err"; got=$?; set -e
    umount "$tmp/ref"
    [ "$got" = 0 ] || { cat "$tmp/err"; fail "read-only mount: runs exited $got"; }
    expect_in "$tmp/out" "\"candidates\": $held"
else
    echo "note: no tmpfs mount here; the read-only mount case was not run (the chmod case was)"
fi
chmod 755 "$tmp/w"

# -- a non-root owner reads their own file after chmod a-w
mkdir "$tmp/own" && chown nobody "$tmp/own"
expect_exit_nobody 0 env AVO_CACHE="$tmp/own/cache" "$AVO" run tests/lua/ga_synthetic.lua --db "$tmp/own/a.db"
as_nobody chmod 444 "$tmp/own/a.db"
for cmd in "runs" "best" "show 1" "export --csv $tmp/own/e.csv" "report -o $tmp/own/r.html"; do
    # shellcheck disable=SC2086 # the command's words
    expect_exit_nobody 0 "$AVO" $cmd --db "$tmp/own/a.db"
    [ ! -e "$tmp/own/a.db-wal" ] && [ ! -e "$tmp/own/a.db-shm" ] ||
        fail "avo $cmd on a 0444 archive left $(ls -l "$tmp/own")"
done
as_nobody chmod 644 "$tmp/own/a.db"
expect_exit_nobody 0 env AVO_CACHE="$tmp/own/cache" "$AVO" run tests/lua/ga_synthetic.lua --db "$tmp/own/a.db" --seed 2
[ "$(q "$tmp/own/a.db" "SELECT count(*) FROM runs WHERE status = 'done'")" = 2 ] ||
    fail "the owner's second run was not recorded"
# ... and a killed run's -wal and -shm, read while the archive is 0444:
# read as they are, left as they were, then resumed by the owner.
# (setpriv itself, not the function: $! must be the process that becomes avo)
setpriv --reuid=nobody --regid=nogroup --clear-groups env AVO_CACHE="$tmp/own/cache" \
    AVO_TEST_SLOW_MS=40 "$AVO" run tests/lua/ga_synthetic.lua --db "$tmp/own/k.db" >/dev/null 2>&1 &
pid=$!
wait_for "$tmp/own/k.db" "SELECT count(*) >= 8 FROM candidates WHERE status <> 'pending'"
kill -9 "$pid"; wait "$pid" 2>/dev/null || true
modes=$(stat -c '%n %a' "$tmp/own/k.db-wal" "$tmp/own/k.db-shm")
as_nobody chmod 444 "$tmp/own/k.db"
expect_exit_nobody 0 "$AVO" runs --db "$tmp/own/k.db"
expect_in "$tmp/out" "running"
[ "$(stat -c '%n %a' "$tmp/own/k.db-wal" "$tmp/own/k.db-shm")" = "$modes" ] ||
    fail "reading changed the side files: $(ls -l "$tmp/own")"
as_nobody chmod 644 "$tmp/own/k.db"
expect_exit_nobody 0 env AVO_CACHE="$tmp/own/cache" "$AVO" resume --db "$tmp/own/k.db"
[ "$(q "$tmp/own/k.db" "SELECT status FROM runs")" = done ] || fail "the owner's resume did not finish"

# -- read commands never give a file a schema
: > "$tmp/empty.db"
sqlite3 "$tmp/kb.db" "CREATE TABLE kb_docs(a)"
sqlite3 "$tmp/foreign.db" "CREATE TABLE t(a); INSERT INTO t VALUES (1)"
for f in empty kb foreign; do
    sum=$(md5sum < "$tmp/$f.db")
    for cmd in "runs" "best" "show 1" "lineage 1" "export --csv $tmp/x.csv" "report -o $tmp/x.html"; do
        # shellcheck disable=SC2086 # the command's words
        expect_exit 1 "$AVO" $cmd --db "$tmp/$f.db"
        [ "$(md5sum < "$tmp/$f.db")" = "$sum" ] || fail "avo $cmd changed $f.db"
        [ ! -e "$tmp/$f.db-wal" ] && [ ! -e "$tmp/x.csv" ] && [ ! -e "$tmp/x.html" ] ||
            fail "avo $cmd on $f.db wrote files"
    done
done
expect_exit 1 "$AVO" runs --db "$tmp/empty.db"
expect_in "$tmp/err" "avo: '$tmp/empty.db' is not an avo archive (it is an empty file)"
expect_exit 1 "$AVO" runs --db "$tmp/kb.db"
expect_in "$tmp/err" "avo: '$tmp/kb.db' is not an avo archive (it has no avo schema)"
expect_exit 1 "$AVO" runs --db "$tmp/foreign.db"
expect_in "$tmp/err" "is not an avo archive (it has tables but no schema version)"
# ... and the same, read-only (as nobody): nothing made beside it
mkdir "$tmp/roe"
: > "$tmp/roe/e.db"
chmod 555 "$tmp/roe"
expect_exit_nobody 1 "$AVO" runs --db "$tmp/roe/e.db"
expect_in "$tmp/err" "avo: '$tmp/roe/e.db' is not an avo archive (it is an empty file)"
[ "$(side_files "$tmp/roe")" = "e.db " ] && [ ! -s "$tmp/roe/e.db" ] ||
    fail "reading an empty read-only file changed it: $(ls -l "$tmp/roe")"
# ... while avo run makes an archive of an empty file
expect_exit 0 "$AVO" run tests/lua/ga_synthetic.lua --db "$tmp/empty.db"
expect_exit 0 "$AVO" runs --db "$tmp/empty.db"

# -- a damaged archive: run and resume refuse it, and the way out works
cp "$tmp/own/a.db" "$tmp/bad.db"
page=$(q "$tmp/bad.db" "SELECT rootpage FROM sqlite_schema WHERE name = 'candidates'")
dd if=/dev/zero of="$tmp/bad.db" bs=4096 seek=$((page - 1)) count=1 conv=notrunc 2>/dev/null
[ "$(q "$tmp/bad.db" "PRAGMA quick_check" 2>&1)" != ok ] || fail "the archive was not damaged"
sum=$(md5sum < "$tmp/bad.db")
version=$(q "$tmp/bad.db" "PRAGMA user_version")
for cmd in "run tests/lua/ga_synthetic.lua" "resume --run 1"; do
    # shellcheck disable=SC2086 # the command's words
    expect_exit 1 "$AVO" $cmd --db "$tmp/bad.db"
    expect_in "$tmp/err" "avo: archive $tmp/bad.db is damaged (PRAGMA quick_check: "
    expect_in "$tmp/err" "nothing was written to it"
    expect_in "$tmp/err" "Run into a new archive (--db another file)"
    expect_in "$tmp/err" "(README, \"A damaged archive\")"
    [ "$(md5sum < "$tmp/bad.db")" = "$sum" ] || fail "avo $cmd wrote into a damaged archive"
done
# ... and the read commands say so, to stderr, naming the archive and what
# quick_check found, then show what they can read (here the damage is in a
# table they do not read); JSON on stdout stays valid; nothing is written.
cp "$tmp/own/a.db" "$tmp/hurt.db"
page=$(q "$tmp/hurt.db" "SELECT rootpage FROM sqlite_schema WHERE name = 'attempts'")
dd if=/dev/zero of="$tmp/hurt.db" bs=4096 seek=$((page - 1)) count=1 conv=notrunc 2>/dev/null
[ "$(q "$tmp/hurt.db" "PRAGMA quick_check" 2>&1)" != ok ] || fail "the archive was not damaged"
sum=$(md5sum < "$tmp/hurt.db")
for cmd in runs "runs --json" best "best --json" "show 1 --json" "lineage 2" "diff 1 2" \
    "export --json -" "export --csv -" "export --csv - --what baselines" "report -o $tmp/hurt.html" \
    "export --git $tmp/hurt.git"; do
    # shellcheck disable=SC2086 # the command's words
    expect_exit 0 "$AVO" $cmd --db "$tmp/hurt.db"
    expect_in "$tmp/err" "avo: warning: archive $tmp/hurt.db is damaged (PRAGMA quick_check: "
    expect_in "$tmp/err" "Page $page"
    expect_in "$tmp/err" "what follows is what could be read of it, and may be incomplete"
    case "$cmd" in
    *--json*) python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$tmp/out" ||
        fail "avo $cmd on a damaged archive: stdout is not JSON" ;;
    esac
    grep -q warning "$tmp/out" && fail "avo $cmd printed the warning on stdout"
    [ "$(md5sum < "$tmp/hurt.db")" = "$sum" ] || fail "avo $cmd wrote into a damaged archive"
done
[ -d "$tmp/hurt.git/.git" ] || fail "the git export of a damaged archive made nothing"
# avo serve says so at start, on stderr, and serves what it can.
"$AVO" serve --db "$tmp/hurt.db" --listen 127.0.0.1:0 >"$tmp/serve.out" 2>"$tmp/serve.err" &
pid=$!
i=0
until grep -q '^http' "$tmp/serve.out"; do
    i=$((i + 1))
    if [ $i -ge 100 ] || ! kill -0 $pid 2>/dev/null; then
        kill $pid 2>/dev/null
        fail "avo serve on a damaged archive did not start: $(cat "$tmp/serve.err")"
    fi
    sleep 0.1
done
kill $pid; wait $pid || true
expect_in "$tmp/serve.err" "avo: warning: archive $tmp/hurt.db is damaged (PRAGMA quick_check: "
[ "$(md5sum < "$tmp/hurt.db")" = "$sum" ] || fail "avo serve wrote into a damaged archive"
expect_exit 1 "$AVO" experiment report --db "$tmp/hurt.db" --out "$tmp/hurt"
expect_in "$tmp/err" "avo: warning: archive $tmp/hurt.db is damaged (PRAGMA quick_check: "
expect_in "$tmp/err" "holds no experiment"
# a whole archive: no warning
expect_exit 0 "$AVO" runs --db "$tmp/own/a.db"
grep -q "warning" "$tmp/err" && fail "a whole archive was warned about: $(cat "$tmp/err")"
# The README's recipe, word for word: what can be read, in a new file to read.
sqlite3 "$tmp/bad.db" .dump | sed 's/^ROLLBACK; -- due to errors$/COMMIT;/' | sqlite3 "$tmp/new.db"
sqlite3 "$tmp/new.db" "PRAGMA user_version = $version"
expect_exit 0 "$AVO" runs --db "$tmp/new.db"
[ "$(grep -c "tests/lua/ga_synthetic.lua" "$tmp/out")" = 2 ] || fail "the recovered copy lost runs"
expect_exit 0 "$AVO" run tests/lua/ga_synthetic.lua --db "$tmp/fresh.db"
echo "archive_files: ok"
