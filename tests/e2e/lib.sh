# Shared helpers for the end-to-end tests (sourced).
set -eu
cd "$AVO_SOURCE_ROOT"
# The variables that change OpenBLAS's kernel or threads start unset, as on
# a plain machine (some images set OPENBLAS_CORETYPE=Haswell): avo names
# any it overrides on its lines, and a test that checks that sets them
# itself (openblas.sh).
unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE OPENBLAS_BLOCK_FACTOR OPENBLAS_VERBOSE \
    OPENBLAS_NUM_THREADS OMP_NUM_THREADS GOTO_NUM_THREADS
tmp=$(mktemp -d)
# the test's status survives the cleanup: a failing rm only says so
trap 'rc=$?; rm -rf "$tmp" 2>/dev/null || echo "note: could not remove $tmp" >&2; exit $rc' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

# expect_exit CODE CMD... : run CMD, capture stdout/stderr in $tmp/out, $tmp/err
expect_exit() {
    want=$1; shift
    set +e
    "$@" >"$tmp/out" 2>"$tmp/err"
    got=$?
    set -e
    if [ "$got" -ne "$want" ]; then
        echo "--- stdout"; cat "$tmp/out"; echo "--- stderr"; cat "$tmp/err"
        fail "'$*' exited $got, expected $want"
    fi
}

# expect_in FILE TEXT : FILE contains TEXT
expect_in() {
    grep -qF -- "$2" "$1" || { echo "--- $1"; cat "$1"; fail "expected '$2' in $1"; }
}

q() { sqlite3 "$1" "$2"; }

# nobody_avo: a path of $AVO that uid 65534 (nobody) can run: $AVO itself,
# or, where the build is out of its reach (a checkout under /root, as a new
# user's clone on a fresh machine), a copy in $tmp. Makes $tmp readable.
nobody_avo() {
    chmod 755 "$tmp"
    if setpriv --reuid=nobody --regid=nogroup --clear-groups test -x "$AVO" 2>/dev/null; then
        echo "$AVO"
    else
        cp "$AVO" "$tmp/avo-for-nobody" && chmod 755 "$tmp/avo-for-nobody" && echo "$tmp/avo-for-nobody"
    fi
}
