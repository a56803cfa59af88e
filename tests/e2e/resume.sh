#!/bin/sh
# avo resume after kill -9 at several points under several seeds: nothing
# finished is lost or repeated, and the resumed run's lineage is exactly the
# lineage of the same run left alone (deterministic test backend).
. "$(dirname "$0")/lib.sh"
export AVO_TEST_SLOW_MS=25

lineage() {
    q "$1" "SELECT c.id, c.operator, c.knobs, c.source_hash, c.status, c.score,
                   (SELECT group_concat(parent || ':' || role, ',') FROM
                      (SELECT parent, role FROM edges WHERE child = c.id ORDER BY parent, role))
            FROM candidates c ORDER BY c.id"
}

for seed in 3 11; do
    expect_exit 0 "$AVO" run tests/lua/ga_synthetic.lua --db "$tmp/full$seed.db" --seed "$seed"
    lineage "$tmp/full$seed.db" > "$tmp/full$seed.txt"
    for delay in 0.3 0.7; do
        db="$tmp/k$seed-$delay.db"
        "$AVO" run tests/lua/ga_synthetic.lua --db "$db" --seed "$seed" >/dev/null 2>&1 &
        pid=$!
        sleep "$delay"
        kill -9 "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
        [ "$(q "$db" "PRAGMA integrity_check")" = ok ] || fail "integrity_check"
        before=$(q "$db" "SELECT count(*) FROM candidates WHERE status <> 'pending'")
        q "$db" "SELECT id, evaluated_at FROM candidates WHERE status <> 'pending' ORDER BY id" > "$tmp/before.txt"
        expect_exit 0 "$AVO" resume --db "$db"
        expect_in "$tmp/err" "resuming run 1"
        expect_in "$tmp/err" "$before finished evaluations kept"
        # Finished evaluations were not repeated: same rows, same timestamps.
        q "$db" "SELECT id, evaluated_at FROM candidates WHERE id IN
                   (SELECT id FROM candidates WHERE status <> 'pending') ORDER BY id" |
            head -n "$(wc -l < "$tmp/before.txt")" > "$tmp/after.txt"
        cmp -s "$tmp/before.txt" "$tmp/after.txt" || fail "a finished evaluation was repeated (seed $seed, kill at $delay s)"
        lineage "$db" > "$tmp/resumed.txt"
        cmp -s "$tmp/full$seed.txt" "$tmp/resumed.txt" || {
            diff "$tmp/full$seed.txt" "$tmp/resumed.txt" | head -5
            fail "resumed lineage differs from the uninterrupted run (seed $seed, kill at $delay s)"
        }
        [ "$(q "$db" "SELECT status FROM runs")" = done ] || fail "resumed run not done"
    done
done

# A finished run has nothing to resume; a missing archive is an error.
expect_exit 1 "$AVO" resume --db "$tmp/full3.db";  expect_in "$tmp/err" "nothing to resume"
expect_exit 1 "$AVO" resume --db "$tmp/none.db";   expect_in "$tmp/err" "cannot open archive"
expect_exit 2 "$AVO" resume;                       expect_in "$tmp/err" "resume needs --db"
echo "resume: ok"
