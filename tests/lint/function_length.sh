#!/bin/sh
# Issue 34: no function over 120 lines in the LLM and agent code, none
# over 80 in the view layer (cli/view/, cli/report.c, cli/serve.c).  The
# checker passes on the tree, and fails on a planted long Lua function,
# planted long C functions and an unparsable file (so it can fail).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
check="$here/../../tools/check-function-length"
"$check" "$here/../.."
"$check" --view "$here/../.."

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/lua/avo/llm" "$tmp/core"
{
  echo 'local M = {}'
  echo 'function M.long(x)'
  i=0; while [ $i -lt 119 ]; do echo '  if x then x = "end" end -- end'; i=$((i + 1)); done
  echo 'end'
  echo 'local function short() return [[end end]] end'
  echo 'return M'
} > "$tmp/lua/avo/llm/long.lua"
rc=0; out=$("$check" "$tmp") || rc=$?
[ "$rc" = 1 ] || { echo "expected exit 1 on a 121-line function, got $rc: $out"; exit 1; }
echo "$out" | grep -q '^lua/avo/llm/long.lua:2: M.long: 121 lines' || { echo "bad report: $out"; exit 1; }
echo "$out" | grep -q short && { echo "short function reported: $out"; exit 1; }

# 120 lines is allowed.
sed -i '3d' "$tmp/lua/avo/llm/long.lua"
"$check" "$tmp" >/dev/null || { echo "a 120-line function was refused"; exit 1; }

{ echo 'int f(void)'; echo '{'; i=0; while [ $i -lt 130 ]; do echo '  ;'; i=$((i + 1)); done; echo '}'; } \
  > "$tmp/core/llm.c"
rc=0; out=$("$check" "$tmp") || rc=$?
[ "$rc" = 1 ] && echo "$out" | grep -q '^core/llm.c:2: f: 132 lines' ||
  { echo "long C function not reported ($rc): $out"; exit 1; }

# The view layer: 80 lines pass, 81 do not.
mkdir -p "$tmp/cli/view"
{ echo 'static void section(void)'; echo '{'; i=0; while [ $i -lt 78 ]; do echo '    ;'; i=$((i + 1)); done; echo '}'; } \
  > "$tmp/cli/view/section_x.c"
"$check" --view "$tmp" >/dev/null || { echo "an 80-line view function was refused"; exit 1; }
sed -i '3i\    ;' "$tmp/cli/view/section_x.c"
rc=0; out=$("$check" --view "$tmp") || rc=$?
[ "$rc" = 1 ] && echo "$out" | grep -q '^cli/view/section_x.c:2: section: 81 lines (most 80)' ||
  { echo "long view function not reported ($rc): $out"; exit 1; }

echo 'function broken() if x then' > "$tmp/lua/avo/llm/broken.lua"
rc=0; "$check" "$tmp" >/dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || { echo "expected exit 2 on an unclosed block, got $rc"; exit 1; }
echo "ok"
