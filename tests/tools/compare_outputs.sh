#!/bin/sh
# tools/compare-outputs: an avo compared with itself gives no difference
# (every output it compares is deterministic once paths and clocks are
# masked), and a binary that prints one thing differently is caught, named
# and exits 1; misuse exits 2.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
: "${AVO:?AVO must name the avo binary}"
fail() { echo "compare_outputs: FAIL: $*"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmp="$root/tools/compare-outputs"

"$cmp" "$AVO" "$AVO" "$tmp/same" >"$tmp/out" 2>&1 || { cat "$tmp/out"; fail "avo differs from itself"; }
grep -q "compare-outputs: identical" "$tmp/out" || fail "no verdict printed"

# An "after" that answers `avo runs --json` with one field changed.
cat >"$tmp/altered" <<SH
#!/bin/sh
if [ "\$1" = runs ]; then "$AVO" "\$@" | sed 's/"seed": *7/"seed": 8/'; exit 0; fi
exec "$AVO" "\$@"
SH
chmod +x "$tmp/altered"
"$cmp" "$AVO" "$tmp/altered" "$tmp/diff" >"$tmp/out" 2>&1
rc=$?
[ "$rc" = 1 ] || { cat "$tmp/out"; fail "an altered output gave exit $rc, expected 1"; }
grep -q "runs-json.stdout" "$tmp/out" || { cat "$tmp/out"; fail "the difference is not named"; }

"$cmp" "$AVO" >/dev/null 2>&1; [ $? = 2 ] || fail "misuse should exit 2"
"$cmp" "$AVO" "$tmp/missing" "$tmp/x" >/dev/null 2>&1; [ $? = 2 ] || fail "a missing binary should exit 2"
echo "compare_outputs: ok"
