# Shared helpers for the fault-injection tests (sourced): the e2e helpers,
# plus lineage() and a check that an archive is whole.
. "$AVO_SOURCE_ROOT/tests/e2e/lib.sh"
export AVO_TEST_SLOW_MS=${AVO_TEST_SLOW_MS:-25}

# The lineage of a run: what must be identical between a run left alone and
# the same run killed and resumed.
lineage() {
    q "$1" "SELECT c.id, c.operator, c.knobs, c.source_hash, c.status, c.score,
                   (SELECT group_concat(parent || ':' || role, ',') FROM
                      (SELECT parent, role FROM edges WHERE child = c.id ORDER BY parent, role))
            FROM candidates c ORDER BY c.id"
}

# whole DB: integrity_check passes and no candidate key appears twice.
whole() {
    [ "$(q "$1" "PRAGMA integrity_check")" = ok ] || fail "integrity_check of $1"
    dups=$(q "$1" "SELECT count(*) - count(DISTINCT key) FROM candidates WHERE key IS NOT NULL")
    [ "$dups" = 0 ] || fail "$dups duplicated candidate keys in $1"
}

# wait_for DB SQL: until the query answers non-zero (at most 30 s)
wait_for() {
    i=0
    # Never query a file that does not exist yet: sqlite3 would create it.
    while ! [ -s "$1" ] || [ "$(q "$1" "$2" 2>/dev/null || echo 0)" = 0 ]; do
        i=$((i + 1))
        [ $i -lt 300 ] || fail "timed out waiting for: $2"
        sleep 0.1
    done
}

# need_mount: skip (77) naming what is missing when this process cannot mount.
need_mount() {
    mkdir -p "$tmp/probe"
    if ! mount -t tmpfs -o size=64k tmpfs "$tmp/probe" 2>"$tmp/mount.err"; then
        echo "skip: cannot mount a tmpfs here (needs root with CAP_SYS_ADMIN): $(cat "$tmp/mount.err")"
        exit 77
    fi
    umount "$tmp/probe"
}
