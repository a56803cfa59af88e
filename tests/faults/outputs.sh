#!/bin/sh
# Outputs of `avo export` and `avo report` that are not regular files are
# written through, never renamed over (issue 20, item 1):
#  - a character device (made here with mknod: never the machine's own),
#    a FIFO with a reader, a symlink to /proc/self/fd/1 (what /dev/stdout
#    is) and `-` all receive the data and stay what they were;
#  - a symlink to a regular file stays a symlink; its target gets the data;
#  - a device that refuses the data (a full device) fails with its reason;
#  - a regular file is still replaced atomically (a new inode, no temporary
#    left behind); a directory is refused.
# mknod needs root (CAP_MKNOD): skipped naming what is missing otherwise.
. "$(dirname "$0")/lib.sh"
if ! mknod "$tmp/null" c 1 3 2>"$tmp/mknod.err"; then
    echo "skip: cannot make a device node here (needs root with CAP_MKNOD): $(cat "$tmp/mknod.err")"
    exit 77
fi
mknod "$tmp/full" c 1 7
db="$tmp/a.db"
expect_exit 0 "$AVO" run tests/lua/ga_synthetic.lua --db "$db"
expect_exit 0 "$AVO" export --db "$db" --csv "$tmp/want.csv"
expect_exit 0 "$AVO" export --db "$db" --json "$tmp/want.json"
rows=$(wc -l < "$tmp/want.csv")
[ "$rows" -gt 10 ] || fail "the reference export has $rows lines"

# is_char PATH: PATH is still a character device
is_char() { [ -c "$1" ] && [ ! -L "$1" ] || fail "$1 is no longer a character device: $(ls -l "$1")"; }

# -- a character device
expect_exit 0 "$AVO" export --db "$db" --csv "$tmp/null"
is_char "$tmp/null"
expect_exit 0 "$AVO" report --db "$db" -o "$tmp/null"
is_char "$tmp/null"
expect_exit 1 "$AVO" export --db "$db" --json "$tmp/full"
expect_in "$tmp/err" "avo: cannot write $tmp/full: No space left on device"
is_char "$tmp/full"
expect_exit 1 "$AVO" report --db "$db" -o "$tmp/full"
expect_in "$tmp/err" "avo: cannot write $tmp/full: No space left on device"
is_char "$tmp/full"

# -- a FIFO, read by cat
mkfifo "$tmp/fifo"
cat "$tmp/fifo" > "$tmp/fifo.out" &
reader=$!
expect_exit 0 "$AVO" export --db "$db" --csv "$tmp/fifo"
wait "$reader"
[ -p "$tmp/fifo" ] || fail "the FIFO was replaced: $(ls -l "$tmp/fifo")"
cmp -s "$tmp/want.csv" "$tmp/fifo.out" || fail "the FIFO's reader did not get the CSV"
cat "$tmp/fifo" > "$tmp/fifo.html" &
reader=$!
expect_exit 0 "$AVO" report --db "$db" -o "$tmp/fifo"
wait "$reader"
[ -p "$tmp/fifo" ] || fail "the FIFO was replaced by the report"
grep -q "</html>" "$tmp/fifo.html" || fail "the FIFO's reader did not get the report"

# -- /dev/stdout is a symlink to /proc/self/fd/1: one of our own, so a
# regression renames over it, not over the machine's.
ln -s /proc/self/fd/1 "$tmp/stdout"
"$AVO" export --db "$db" --csv "$tmp/stdout" 2>"$tmp/err" | cat > "$tmp/piped.csv"
[ -L "$tmp/stdout" ] || fail "the stdout symlink was replaced: $(ls -l "$tmp/stdout")"
cmp -s "$tmp/want.csv" "$tmp/piped.csv" || fail "export to a /proc/self/fd/1 link did not reach the pipe"
"$AVO" report --db "$db" -o "$tmp/stdout" 2>"$tmp/err" | cat > "$tmp/piped.html"
[ -L "$tmp/stdout" ] || fail "the stdout symlink was replaced by the report"
grep -q "</html>" "$tmp/piped.html" || fail "report to a /proc/self/fd/1 link did not reach the pipe"
# ... and into a file the shell opened (stdout a regular file): written
# through the descriptor, so output around it is kept.
{ echo before; "$AVO" export --db "$db" --csv "$tmp/stdout" 2>/dev/null; echo after; } > "$tmp/around.csv"
[ "$(head -1 "$tmp/around.csv")" = before ] && [ "$(tail -1 "$tmp/around.csv")" = after ] ||
    fail "export through stdout lost the shell's output around it"
[ "$(wc -l < "$tmp/around.csv")" = $((rows + 2)) ] || fail "export through stdout: wrong line count"

# -- - is standard output (both commands), and says nothing on stderr
expect_exit 0 "$AVO" export --db "$db" --json -
cmp -s "$tmp/want.json" "$tmp/out" || fail "export --json - differs from the file export"
[ ! -e ./- ] || fail "export --json - wrote a file named -"
expect_exit 0 "$AVO" report --db "$db" -o -
grep -q "</html>" "$tmp/out" || fail "report -o - did not write the page to stdout"
[ ! -s "$tmp/err" ] || { cat "$tmp/err"; fail "report -o - printed on stderr"; }
[ ! -e ./- ] || fail "report -o - wrote a file named -"

# -- a symlink to a regular file: the link stays, its target gets the data
echo old > "$tmp/target.csv"
ln -s target.csv "$tmp/link.csv"
expect_exit 0 "$AVO" export --db "$db" --csv "$tmp/link.csv"
[ -L "$tmp/link.csv" ] || fail "the symlink was replaced by a file"
cmp -s "$tmp/want.csv" "$tmp/target.csv" || fail "the symlink's target did not get the export"
# a dangling symlink: its target is created
ln -s made.html "$tmp/dangling.html"
expect_exit 0 "$AVO" report --db "$db" -o "$tmp/dangling.html"
[ -L "$tmp/dangling.html" ] && grep -q "</html>" "$tmp/made.html" ||
    fail "a dangling symlink's target was not created"

# -- a regular file: replaced by a rename (a new inode), nothing left behind
echo old > "$tmp/reg.csv"
before=$(stat -c %i "$tmp/reg.csv")
expect_exit 0 "$AVO" export --db "$db" --csv "$tmp/reg.csv"
expect_in "$tmp/err" "avo: wrote $tmp/reg.csv"
[ "$(stat -c %i "$tmp/reg.csv")" != "$before" ] || fail "a regular file was not replaced by a rename"
cmp -s "$tmp/want.csv" "$tmp/reg.csv" || fail "the regular file's export differs"
# a regular file in a directory the rename cannot write: the old file stays whole
chmod 755 "$tmp" # nobody reads the archive
mkdir "$tmp/ro"
cp "$tmp/want.csv" "$tmp/ro/keep.csv"
chmod 555 "$tmp/ro"
setpriv --reuid=nobody --regid=nogroup --clear-groups "$(nobody_avo)" export --db "$db" --csv "$tmp/ro/keep.csv" \
    >"$tmp/out" 2>"$tmp/err" && fail "export into a read-only directory succeeded as nobody"
expect_in "$tmp/err" "avo: cannot write $tmp/ro/keep.csv: Permission denied"
cmp -s "$tmp/want.csv" "$tmp/ro/keep.csv" || fail "a refused export changed the old file"
chmod 755 "$tmp/ro"

# -- a directory is refused
mkdir "$tmp/dir"
expect_exit 1 "$AVO" report --db "$db" -o "$tmp/dir"
expect_in "$tmp/err" "avo: cannot write $tmp/dir: Is a directory"
[ -d "$tmp/dir" ] || fail "the directory was replaced"
ls "$tmp" | grep -q '\.tmp\.' && fail "a temporary output file was left behind"
echo "outputs: ok"
