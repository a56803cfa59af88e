#!/bin/sh
# tests/sandbox/fallback.sh — avo evaluates for real where namespaces are
# refused (issue 19): under tests/deny-namespaces (a container runtime's
# default seccomp profile), and, started as root, in a plain chroot ("/" no
# mount point).
#   - namespaces refused: results are ok/wrong/compile_error as usual and
#     say "sandbox":"landlock"; avo doctor names landlock and what namespaces
#     lack; forcing AVO_SANDBOX=namespaces is a clear error (exit 3);
#   - Landlock refused too (deny-namespaces --no-landlock): evaluation is
#     refused (exit 3) with a message naming both and the opt-in;
#     AVO_SANDBOX=unisolated (and the deprecated weak) evaluate, saying so;
#   - a user with 60 processes of their own (nobody's, started by root)
#     still compiles under landlock: the process limit counts them all;
#   - root: a compile cache in a directory the sandbox's uid cannot enter
#     still works under landlock (the binds are opened before the uid drop);
#   - root: the same quickstart evaluation inside a chroot picks landlock;
#   - root: a directory the sandbox's uid cannot enter on the way to the
#     compiler (the chroot's / of mode 0700, a CC under a private directory)
#     is named with its mode and owner and what to change.
# Usage: fallback.sh DENY_NAMESPACES_BINARY
deny=$(realpath "${1:-}" 2>/dev/null) # meson passes it relative to the build directory
. "$AVO_SOURCE_ROOT/tests/e2e/lib.sh"
[ -x "$deny" ] || fail "no deny-namespaces helper at '$deny'"
kernels=tests/e2e/kernels
evaluator=tests/e2e/evaluators/axpy.lua
export AVO_CACHE="$tmp/cache"

# field FILE KEY: a top-level field of the JSON result in FILE
field() {
    python3 -c 'import json,sys; r=json.loads(open(sys.argv[1]).read().strip().splitlines()[-1]); print(r.get(sys.argv[2], ""))' "$1" "$2"
}
# verdict FILE STATUS SANDBOX: the result's status and mechanism
verdict() {
    [ "$(field "$1" status)" = "$2" ] || { cat "$1"; fail "status is not $2"; }
    [ "$(field "$1" sandbox)" = "$3" ] || { cat "$1"; fail "sandbox is not $3"; }
}

# ---------------------------------------------------- namespaces refused
expect_exit 0 "$deny" "$AVO" eval $kernels/axpy.c --evaluator $evaluator --json
verdict "$tmp/out" ok landlock
expect_exit 1 "$deny" "$AVO" eval $kernels/axpy_wrong.c --evaluator $evaluator --json
verdict "$tmp/out" wrong landlock
expect_exit 1 "$deny" "$AVO" eval $kernels/axpy_compile_error.c --evaluator $evaluator --json
verdict "$tmp/out" compile_error landlock
expect_in "$tmp/out" "kernel.c:"
expect_exit 1 "$deny" "$AVO" eval $kernels/axpy_segv.c --evaluator $evaluator --json
verdict "$tmp/out" crashed landlock
expect_exit 0 "$deny" "$AVO" doctor
expect_in "$tmp/out" "sandbox         landlock (the strongest this machine allows)"
expect_in "$tmp/out" "namespaces    MISSING: unsharing namespaces failed"
expect_in "$tmp/out" "to enable: allow unprivileged user namespaces"
expect_exit 3 env AVO_SANDBOX=namespaces "$deny" "$AVO" eval $kernels/axpy.c --evaluator $evaluator
expect_in "$tmp/out" "AVO_SANDBOX=namespaces, but this machine does not offer it"

# ----------------------------------------------- Landlock refused as well
expect_exit 3 "$deny" --no-landlock "$AVO" eval $kernels/axpy.c --evaluator $evaluator
expect_in "$tmp/out" "refusing to run untrusted kernels: nothing on this machine isolates"
expect_in "$tmp/out" "landlock: the kernel has no Landlock system calls"
expect_in "$tmp/out" "AVO_SANDBOX=unisolated runs kernels anyway"
expect_exit 0 "$deny" --no-landlock "$AVO" doctor
expect_in "$tmp/out" "sandbox         NONE: kernels are refused here"
expect_in "$tmp/out" "landlock      MISSING"
expect_exit 0 env AVO_SANDBOX=unisolated "$deny" --no-landlock "$AVO" eval $kernels/axpy.c \
    --evaluator $evaluator --json
verdict "$tmp/out" ok unisolated
expect_exit 0 env AVO_SANDBOX=weak "$deny" --no-landlock "$AVO" eval $kernels/axpy.c \
    --evaluator $evaluator --json --param UNROLL=2
verdict "$tmp/out" ok unisolated
expect_exit 3 env AVO_SANDBOX=landlock "$deny" --no-landlock "$AVO" eval $kernels/axpy.c \
    --evaluator $evaluator
expect_in "$tmp/out" "AVO_SANDBOX=landlock, but this machine does not offer it"

# ------------------------- a user with many processes of their own
# Under landlock the sandbox keeps the user's uid, whose process limit
# counts every task of it (a desktop's hundreds, a run's own workers): the
# compiler's limit comes on top of those, so 60 sleeping processes of the
# same user do not make its fork fail (nobody's, where we are root).
as_user=
if [ "$(id -u)" = 0 ]; then
    as_user="setpriv --reuid=nobody --regid=nogroup --clear-groups"
    user_avo=$(nobody_avo)
else
    user_avo=$AVO
fi
mkdir -m 755 "$tmp/user" && cp $kernels/axpy.c $evaluator "$deny" "$tmp/user/" && chmod a+r "$tmp/user"/*
user_deny="$tmp/user/$(basename "$deny")"
[ -z "$as_user" ] || chown nobody "$tmp/user"
# (on a failure they outlive the test by two minutes at most, holding none of its output)
$as_user sh -c 'trap "kill \$pids; exit 0" TERM; pids=; i=0
    while [ $i -lt 60 ]; do sleep 120 & pids="$pids $!"; i=$((i + 1)); done; wait' </dev/null >/dev/null 2>&1 &
sleepers=$!
sleep 1
expect_exit 0 env AVO_CACHE="$tmp/user/cache" $as_user "$user_deny" "$user_avo" eval "$tmp/user/axpy.c" \
    --evaluator "$tmp/user/axpy.lua" --json --param UNROLL=2
verdict "$tmp/out" ok landlock
kill $sleepers 2>/dev/null || true # (the sleepers' shell ends them)
wait $sleepers 2>/dev/null || true

if [ "$(id -u)" != 0 ]; then
    echo "sandbox_fallback: not root: the private-cache and chroot cases were not run"
    exit 0
fi

# ------------------------------- root: a cache the sandbox's uid cannot enter
mkdir -m 700 "$tmp/private"
expect_exit 0 env AVO_CACHE="$tmp/private/cache" "$deny" "$AVO" eval $kernels/axpy.c \
    --evaluator $evaluator --json --param UNROLL=4
verdict "$tmp/out" ok landlock

# The chroot and no-/proc cases below need a private mount namespace
# (unshare -m); where / is no mount point, as when this suite itself runs
# in a chroot, none can be made: those cases are skipped, the rest runs, and
# the test exits 77 saying so.
if nomountns=$(unshare -m true 2>&1); then nomountns=; else nomountns=${nomountns:-unshare -m failed}; fi
[ -z "$nomountns" ] || echo "sandbox_fallback: no private mount namespace here ($nomountns): the chroot cases are skipped"

# --------------------------------------------- root: a plain chroot
# (its uid locks are not the host's: a range of its own, see eval/sandbox.h)
if [ -z "$nomountns" ]; then
# The host's system directories, this checkout and /proc bound into a
# directory that is no mount point; a private mount namespace only so the
# binds vanish with the test (inside the chroot "/" is still no mount point).
chroot_dir="$tmp/chroot"
mkdir -m 755 "$chroot_dir"
cat >"$tmp/in-chroot.sh" <<EOF
set -e
mount --make-rprivate /
for d in usr lib lib64 lib32 bin sbin etc dev; do
    [ -e /\$d ] || continue
    mkdir -p "$chroot_dir/\$d"
    mount --rbind /\$d "$chroot_dir/\$d"
done
mkdir -p "$chroot_dir/tmp" "$chroot_dir/proc" "$chroot_dir$AVO_SOURCE_ROOT" "$chroot_dir$(dirname "$AVO")"
chmod 1777 "$chroot_dir/tmp"
mount -t proc proc "$chroot_dir/proc"
mount --rbind "$AVO_SOURCE_ROOT" "$chroot_dir$AVO_SOURCE_ROOT"
mount --rbind "$(dirname "$AVO")" "$chroot_dir$(dirname "$AVO")"
exec chroot "$chroot_dir" sh -c 'cd "$AVO_SOURCE_ROOT" && AVO_CACHE=/tmp/cache AVO_SANDBOX_UID_BASE=240000 "$AVO" eval $kernels/axpy.c --evaluator $evaluator --json'
EOF
expect_exit 0 unshare -m sh "$tmp/in-chroot.sh"
verdict "$tmp/out" ok landlock

# ----------------- root: a chroot whose / the sandbox's uid cannot enter
# (a Debian root made in a directory of mode 0700): the error names the
# directory, its mode and owner, and what to change.
chmod 700 "$chroot_dir"
rm -rf "$chroot_dir/tmp/cache" # a fresh compile, not the cached object
expect_exit 3 unshare -m sh "$tmp/in-chroot.sh"
expect_in "$tmp/out" "cannot run 'cc': Permission denied: the sandbox's uid"
expect_in "$tmp/out" "cannot enter / (mode 0700, owner uid 0, gid 0): make it searchable by every user (chmod o+x /)"
chmod 755 "$chroot_dir"
fi

# ---------- root: a compiler in a directory the sandbox's uid cannot enter
chmod 711 "$tmp" # only hidden/ below is closed
mkdir -m 700 "$tmp/hidden" && mkdir -m 755 "$tmp/hidden/bin"
ln -s "$(command -v cc)" "$tmp/hidden/bin/cc"
expect_exit 3 env CC="$tmp/hidden/bin/cc" "$deny" "$AVO" eval $kernels/axpy.c --evaluator $evaluator \
    --param UNROLL=8
expect_in "$tmp/out" "cannot enter $tmp/hidden (mode 0700, owner uid 0, gid 0)"
expect_in "$tmp/out" "chmod o+x $tmp/hidden"

# --------------------------------------------- root: no /proc mounted
# (a chroot as many make it): the namespace view needs /proc/self/fd, so
# landlock, and avo finds its own binary without /proc/self/exe for a run's
# workers.
if [ -z "$nomountns" ]; then
expect_exit 0 unshare -m sh -c 'mount -t tmpfs none /proc && exec "$0" doctor' "$AVO"
expect_in "$tmp/out" "namespaces    MISSING: /proc is not mounted"
expect_exit 0 unshare -m sh -c 'mount -t tmpfs none /proc && exec "$0" run "$1" --db "$2" --max-evals 3 --retime 0' \
    "$AVO" "$AVO_SOURCE_ROOT/examples/quickstart.lua" "$tmp/noproc.db"
[ "$(sqlite3 "$tmp/noproc.db" "SELECT count(*) FROM candidates WHERE json_extract(result, '$.sandbox') = 'landlock' AND status = 'ok'")" -ge 1 ] ||
    fail "without /proc: no ok evaluation under landlock"
fi
if [ -n "$nomountns" ]; then
    echo "skip: the chroot and no-/proc cases need a private mount namespace: unshare -m: $nomountns (the other cases passed)"
    exit 77
fi
echo "sandbox_fallback: all cases passed"
