#!/bin/sh
# tests/sandbox/userns.sh — root in a user namespace with a partial id map
# (issue 32): a rootless container's root sees 65,536 ids, not the default
# sandbox range 200000.., and root of a rootful container may not mount.
# Run through tests/sandbox/partial-map.py (root writes the maps).
#   - ids 0..65535: avo doctor names the range avo picks inside the map, and
#     the quickstart evaluates under namespaces with every result recording
#     that same range (sandbox_uids), no setting given;
#   - the same without CAP_SYS_ADMIN: root tries a user namespace of the
#     sandbox's uid before Landlock, doctor says so, evaluations are ok,
#     also with a compile cache only root can enter;
#   - AVO_SANDBOX_UID_BASE set outside the map: an error naming the settings;
#   - only root mapped: no uid to drop to, said by doctor and the evaluation.
# Needs root (exit 77 otherwise: only root may write such maps) and a kernel
# with user namespaces (77 where they are refused, saying so).
. "$AVO_SOURCE_ROOT/tests/e2e/lib.sh"
# The cases are about avo choosing with no setting: a range a harness set
# for the host (tools/fresh-debian-check does) means nothing in this namespace.
unset AVO_SANDBOX_UID AVO_SANDBOX_UID_BASE AVO_SANDBOX_UID_COUNT
[ "$(id -u)" = 0 ] || { echo "skip: only root may give a user namespace a partial map of its own ids"; exit 77; }
command -v sqlite3 >/dev/null || { echo "skip: sqlite3 not found"; exit 77; }
map="$AVO_SOURCE_ROOT/tests/sandbox/partial-map.py"
chmod 755 "$tmp" # the sandbox's uid reaches the archive's directory only through binds
export AVO_CACHE="$tmp/cache"
kernels=tests/e2e/kernels
evaluator=tests/e2e/evaluators/axpy.lua

set +e
"$map" 65536 -- true
rc=$?
set -e
[ $rc = 77 ] && { echo "skip: the kernel refuses user namespaces here"; exit 77; }

# ------------------------------------------ ids 0..65535, root may mount
expect_exit 0 "$map" 65536 -- "$AVO" doctor
expect_in "$tmp/out" "sandbox         namespaces (the strongest this machine allows)"
expect_in "$tmp/out" "how           root builds each sandbox's view"
expect_in "$tmp/out" "picked inside /proc/self/uid_map, where the default 200000.. is not mapped"
range=$(sed -n 's/^  uids *\([0-9]*\)\.\.\([0-9]*\) (\([0-9]*\)).*/\1 \2 \3/p' "$tmp/out")
read -r first last count <<EOF2
$range
EOF2
[ -n "$first" ] && [ "$count" -ge 8 ] && [ "$last" -lt 65536 ] || fail "doctor named no range: $range"
expect_exit 0 "$map" 65536 -- "$AVO" run examples/quickstart.lua --db "$tmp/q.db" --max-evals 4 --retime 0
ok=$(q "$tmp/q.db" "SELECT count(*) FROM candidates WHERE status = 'ok'")
[ "$ok" -ge 2 ] || fail "$ok ok candidates under a partial map"
recorded=$(q "$tmp/q.db" "SELECT DISTINCT json_extract(result, '\$.sandbox') || ' ' ||
    json_extract(result, '\$.sandbox_uids.first') || ' ' || json_extract(result, '\$.sandbox_uids.count')
    FROM candidates WHERE result IS NOT NULL")
[ "$recorded" = "namespaces $first $count" ] ||
    fail "results record '$recorded', doctor said namespaces $first $count"

# ------------------------------- the same, root without CAP_SYS_ADMIN
expect_exit 0 "$map" 65536 --no-mount -- "$AVO" doctor
expect_in "$tmp/out" "sandbox         namespaces (the strongest this machine allows)"
expect_in "$tmp/out" "root may not mount here: each sandbox builds its view in a user namespace where only its uid exists"
expect_in "$tmp/out" "uids          $first..$last ($count)"
expect_exit 0 "$map" 65536 --no-mount -- "$AVO" eval $kernels/axpy.c --evaluator $evaluator --json
expect_in "$tmp/out" '"sandbox":"namespaces"'
expect_in "$tmp/out" '"status":"ok"'
expect_exit 1 "$map" 65536 --no-mount -- "$AVO" eval $kernels/axpy_wrong.c --evaluator $evaluator --json
expect_in "$tmp/out" '"status":"wrong"'
# A compile cache only root can enter (as under /root) still works: the
# binds are opened with root's file rights before the uid drops.
mkdir -m 700 "$tmp/private"
expect_exit 0 env AVO_CACHE="$tmp/private/cache" "$map" 65536 --no-mount -- "$AVO" eval \
    $kernels/axpy.c --evaluator $evaluator --json --param UNROLL=4
expect_in "$tmp/out" '"status":"ok"'

# ------------------------------------ a range set outside the map
expect_exit 3 env AVO_SANDBOX_UID_BASE=300000 "$map" 65536 -- "$AVO" eval $kernels/axpy.c \
    --evaluator $evaluator --param UNROLL=2
expect_in "$tmp/out" "uids 300000 to 301023 do not exist in this user namespace"
expect_in "$tmp/out" "unset them to let avo pick one"

# ------------------------------------------------ only root mapped
expect_exit 0 "$map" 1 -- "$AVO" doctor
expect_in "$tmp/out" "maps no uid for the sandboxes to drop to"
expect_exit 3 "$map" 1 -- "$AVO" eval $kernels/axpy.c --evaluator $evaluator --param UNROLL=4
expect_in "$tmp/out" "maps no uid for the sandboxes to drop to"
echo "sandbox_userns: all cases passed"
