#!/bin/sh
# kill -9 during a run leaves an archive that passes integrity_check and
# holds every finished evaluation; no worker outlives the engine.
. "$(dirname "$0")/lib.sh"
# A private copy of the binary, so its workers can be told from any other avo.
cp "$AVO" "$tmp/avo-killed"
for delay in 2 4; do
    db="$tmp/k$delay.db"
    "$tmp/avo-killed" run examples/quickstart.lua --db "$db" --jobs 2 >"$tmp/out" 2>"$tmp/err" &
    pid=$!
    # Kill once something has finished (however loaded the machine), then
    # $delay - 2 seconds later still.
    waited=0
    while [ "$waited" -lt 600 ] && [ "$(q "$db" "SELECT count(*) FROM candidates
                                        WHERE status <> 'pending'" 2>/dev/null || echo 0)" -lt 1 ]; do
        sleep 0.1
        waited=$((waited + 1))
    done
    sleep $((delay - 2))
    kill -9 "$pid"
    wait "$pid" 2>/dev/null || true
    sleep 0.5
    [ "$(q "$db" "PRAGMA integrity_check")" = ok ] || fail "integrity_check after kill at ${delay}s"
    done_n=$(q "$db" "SELECT count(*) FROM candidates WHERE status <> 'pending'")
    [ "$done_n" -ge 1 ] || fail "nothing finished within a minute"
    missing=$(q "$db" "SELECT count(*) FROM candidates c WHERE c.status = 'ok'
                         AND (SELECT count(*) FROM evaluations e WHERE e.candidate_id = c.id) = 0")
    [ "$missing" = 0 ] || fail "$missing finished candidates lost their evaluations"
    orphans=$(q "$db" "SELECT count(*) FROM edges WHERE parent NOT IN (SELECT id FROM candidates)")
    [ "$orphans" = 0 ] || fail "dangling parent edges"
done
sleep 0.5
if pgrep -f "$tmp/avo-killed worker" >/dev/null 2>&1; then
    pgrep -af "$tmp/avo-killed worker" >&2
    fail "workers outlived the killed engine"
fi

# The same while a kernel hangs: the runner executing it dies with the
# engine too (it would otherwise spin until its CPU limit).
"$tmp/avo-killed" eval tests/e2e/kernels/axpy_hang.c --evaluator tests/e2e/evaluators/axpy.lua \
    >/dev/null 2>&1 &
pid=$!
sleep 1.5
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
sleep 0.5
if pgrep -f "$tmp/avo-killed" >/dev/null 2>&1; then
    pgrep -af "$tmp/avo-killed" >&2
    fail "a runner outlived the killed engine"
fi
echo "kill_run: ok"
