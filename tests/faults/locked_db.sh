#!/bin/sh
# Another writer holds the archive: the run waits for it (SQLite's busy
# handler backs off, up to AVO_DB_TIMEOUT seconds, default 60) and loses
# nothing; past that bound it stops with a clear message, every finished
# evaluation it could write is kept, and resume completes the same lineage.
. "$(dirname "$0")/lib.sh"
export AVO_TEST_SLOW_MS=40
expect_exit 0 "$AVO" run tests/lua/ga_synthetic.lua --db "$tmp/full.db" --seed 4
lineage "$tmp/full.db" > "$tmp/full.txt"

# hold DB SECONDS: a write transaction held open by another process.
hold() {
    (echo "BEGIN IMMEDIATE; INSERT INTO events (run_id, t, kind) VALUES (NULL, 0, 'lock');"
     sleep "$2"; echo "ROLLBACK;") | sqlite3 "$1" &
}

# Held for 7 s (longer than the old fixed 5 s): the run waits and finishes.
db="$tmp/w.db"
"$AVO" run tests/lua/ga_synthetic.lua --db "$db" --seed 4 >"$tmp/out" 2>"$tmp/err" &
pid=$!
wait_for "$db" "SELECT count(*) >= 2 FROM candidates WHERE status <> 'pending'"
hold "$db" 7
wait "$pid" || { cat "$tmp/err"; fail "the run did not survive a 7 s lock"; }
wait
whole "$db"
lineage "$db" > "$tmp/w.txt"
cmp -s "$tmp/full.txt" "$tmp/w.txt" || fail "lineage after waiting for a lock differs"

# AVO_DB_TIMEOUT=0.5 against a 5 s lock: stopped with a clear message.
db="$tmp/t.db"
AVO_DB_TIMEOUT=0.5 "$AVO" run tests/lua/ga_synthetic.lua --db "$db" --seed 4 >"$tmp/out" 2>"$tmp/err" &
pid=$!
wait_for "$db" "SELECT count(*) >= 2 FROM candidates WHERE status <> 'pending'"
hold "$db" 5
set +e; wait "$pid"; got=$?; set -e
[ "$got" = 1 ] || { cat "$tmp/err"; fail "a run past AVO_DB_TIMEOUT exited $got, expected 1"; }
expect_in "$tmp/err" "database is locked"
wait
whole "$db"
expect_exit 0 "$AVO" resume --db "$db"
lineage "$db" > "$tmp/t.txt"
cmp -s "$tmp/full.txt" "$tmp/t.txt" || fail "lineage after a lock timeout and resume differs"

# A malformed AVO_DB_TIMEOUT is refused, naming it.
AVO_DB_TIMEOUT=soon expect_exit 1 "$AVO" run tests/lua/ga_synthetic.lua --db "$tmp/x.db"
expect_in "$tmp/err" "AVO_DB_TIMEOUT='soon' is not a number of seconds"
echo "locked_db: ok"
