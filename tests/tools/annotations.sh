#!/bin/sh
# tools/check-annotations passes on the tree, and fails, naming the
# function, when a public Lua function, an avo.llm function declared in its
# ---@meta file or a C-registered avo.core function loses its annotation.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
check="$root/tools/check-annotations"
command -v python3 >/dev/null || { echo "annotations: python3 missing"; exit 77; }
fail() { echo "annotations: FAIL: $*"; exit 1; }

"$check" "$root" || fail "the tree has unannotated public functions"

# The ---@meta files are Lua a language server parses: they must compile.
: "${AVO:?AVO must name the avo binary}"
tmp0=$(mktemp -d)
{
    echo 'local args = ...'
    echo 'local n = 0'
    echo 'for f in args.files:gmatch("[^:]+") do'
    echo '  local chunk, err = loadfile(f, "t"); assert(chunk, err); n = n + 1'
    echo 'end'
    echo 'assert(n >= 4, "expected the four meta files")'
    echo 'print("types: ok")'
} >"$tmp0/load.lua"
files=$(printf '%s:' "$root"/lua/types/*.lua)
"$AVO" run "$tmp0/load.lua" --db "$tmp0/x.db" files="$files" >"$tmp0/out" 2>&1 ||
    { cat "$tmp0/out"; rm -rf "$tmp0"; fail "a ---@meta file does not compile"; }
grep -q "types: ok" "$tmp0/out" || { cat "$tmp0/out"; rm -rf "$tmp0"; fail "the meta files were not loaded"; }
rm -rf "$tmp0"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
copy() {
    rm -rf "$tmp/t" && mkdir -p "$tmp/t"
    cp -r "$root/lua" "$root/strategies" "$root/operators" "$tmp/t/"
}
# expect_failure WHAT: the checker exits 1 on the copy and names WHAT
expect_failure() {
    "$check" "$tmp/t" >"$tmp/out" 2>&1
    rc=$?
    [ "$rc" = 1 ] || { cat "$tmp/out"; fail "exit $rc, expected 1 ($1)"; }
    grep -q "$1" "$tmp/out" || { cat "$tmp/out"; fail "output does not name $1"; }
}

copy   # an inline annotation removed
sed -i '/^---@param ev avo.Evaluator$/d' "$tmp/t/lua/avo/init.lua"
expect_failure "avo.evaluate_all: no ---@param for ev"

copy   # a new public function without any
sed '/^return M$/d' "$tmp/t/lua/avo/json.lua" >"$tmp/t/lua/avo/json.lua.new"
printf 'function M.undocumented(x) return x end\nreturn M\n' >>"$tmp/t/lua/avo/json.lua.new"
mv "$tmp/t/lua/avo/json.lua.new" "$tmp/t/lua/avo/json.lua"
expect_failure "M.undocumented: no ---@ annotation"

copy   # a function of lua/avo/llm.lua missing from its meta file
printf '\nfunction M.new_public(a) return a end\n' >>"$tmp/t/lua/avo/llm.lua"
sed -i 's/^return M$//' "$tmp/t/lua/avo/llm.lua"
printf 'return M\n' >>"$tmp/t/lua/avo/llm.lua"
expect_failure "M.new_public: not declared in lua/types/avo_llm.lua"

copy   # a shipped strategy's run without annotations
sed -i '/^---@param opts avo.StrategyOptions$/d' "$tmp/t/strategies/random.lua"
expect_failure "strategies/random.lua:.*M.run: no ---@param for opts"

copy   # a C function registered but not declared
sed -i 's/{"hostname", core_hostname},/{"hostname", core_hostname}, {"brand_new", core_hostname},/' "$tmp/t/lua/lua_util.c"
expect_failure "core.brand_new is not declared"

copy   # a method of a userdata class registered but not declared
sed -i 's/{"close", kb_close},/{"close", kb_close}, {"vacuum", kb_close},/' "$tmp/t/lua/lua_kb.c"
expect_failure "avo.Kb:vacuum is not declared"

echo "annotations: ok"
