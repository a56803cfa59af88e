#!/bin/sh
# The islands strategy on the deterministic test backend: same seed, same
# lineage (whatever --jobs); another seed, another lineage; migrations after
# every migration_interval-th generation, moving records into the receiving
# populations; bad options named; resume after kill -9 gives the lineage of
# the run left alone.
. "$(dirname "$0")/lib.sh"
script=tests/lua/islands_synthetic.lua

lineage() {
    q "$1" "SELECT c.id, c.generation, c.operator, c.knobs, c.source_hash, c.status, c.score,
                   (SELECT group_concat(parent || ':' || role, ',') FROM
                      (SELECT parent, role FROM edges WHERE child = c.id ORDER BY parent, role))
            FROM candidates c ORDER BY c.id"
    q "$1" "SELECT data FROM events WHERE kind = 'migration' ORDER BY id"
}
migration_generations() {
    q "$1" "SELECT group_concat(g, ' ') FROM (SELECT json_extract(data, '$.generation') AS g
            FROM events WHERE kind = 'migration' ORDER BY id)"
}

# Determinism.
expect_exit 0 "$AVO" run "$script" --db "$tmp/a.db" --seed 7 --jobs 2
expect_in "$tmp/out" "best #"
expect_in "$tmp/err" "islands: migration after generation 2 (ring):"
expect_exit 0 "$AVO" run "$script" --db "$tmp/b.db" --seed 7 --jobs 1
expect_exit 0 "$AVO" run "$script" --db "$tmp/c.db" --seed 8 --jobs 2
lineage "$tmp/a.db" > "$tmp/a.txt"
lineage "$tmp/b.db" > "$tmp/b.txt"
lineage "$tmp/c.db" > "$tmp/c.txt"
[ "$(wc -l < "$tmp/a.txt")" -ge 40 ] || fail "expected a few generations of candidates"
cmp -s "$tmp/a.txt" "$tmp/b.txt" || { diff "$tmp/a.txt" "$tmp/b.txt" | head; fail "same seed, different lineage"; }
cmp -s "$tmp/a.txt" "$tmp/c.txt" && fail "different seeds gave the same lineage"
[ "$(q "$tmp/a.db" "SELECT max(generation) FROM candidates")" = 6 ] || fail "expected generations 0..6"
[ "$(q "$tmp/a.db" "SELECT count(*) FROM events WHERE kind = 'generation'")" = 7 ] ||
    fail "expected one progress report per generation"

# Migrations after generations 2 and 4 (none after the last, 6); with
# interval 3 after 3 only; with one island never.
[ "$(migration_generations "$tmp/a.db")" = "2 4" ] || fail "migrations at $(migration_generations "$tmp/a.db")"
expect_exit 0 "$AVO" run "$script" --db "$tmp/d.db" --seed 7 migration_interval=3 generations=7
[ "$(migration_generations "$tmp/d.db")" = "3 6" ] || fail "interval 3: migrations at $(migration_generations "$tmp/d.db")"
expect_exit 0 "$AVO" run "$script" --db "$tmp/e.db" --seed 7 islands=1
[ "$(q "$tmp/e.db" "SELECT count(*) FROM events WHERE kind = 'migration'")" = 0 ] || fail "one island migrated"

# Each receiving population holds its migrants, not the records they
# replaced, and no more than `population` records; ring: island i receives
# from island i-1 only; all: from every other island.
expect_exit 0 "$AVO" run "$script" --db "$tmp/f.db" --seed 7 topology=all islands=4 migrants=1
for db in "$tmp/a.db" "$tmp/f.db"; do
    q "$db" "SELECT data FROM events WHERE kind = 'migration' ORDER BY id" > "$tmp/m.jsonl"
    python3 - "$tmp/m.jsonl" <<'PY' || fail "migration payloads of $db"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert rows, "no migrations"
moved = 0
for ev in rows:
    n = len(ev["moves"])
    for mv in ev["moves"]:
        pop, to = mv["population"], mv["to"]
        assert len(pop) == len(set(pop)) <= 5, (ev["generation"], mv)
        for m in mv["migrants"]:
            assert m["id"] in pop, ("migrant not in population", ev["generation"], mv)
            assert m["from"] != to
            if ev["topology"] == "ring":
                assert m["from"] == (to - 2) % n + 1, ("ring source", mv)
        for r in mv["replaced"]:
            assert r not in pop, ("replaced record still in population", mv)
        assert len(mv["replaced"]) <= len(mv["migrants"])
        moved += len(mv["migrants"])
    if ev["topology"] == "all":
        assert n == 4
assert moved > 0
PY
done
[ "$(q "$tmp/f.db" "SELECT DISTINCT json_extract(data, '$.topology') FROM events WHERE kind = 'migration'")" = all ] ||
    fail "topology all not recorded"
# Migrants are records that move, never evaluated again: one row per
# (source, knobs), and a migrant keeps the generation it was made in.
[ "$(q "$tmp/a.db" "SELECT count(*) FROM candidates")" = \
  "$(q "$tmp/a.db" "SELECT count(DISTINCT source_hash || knobs) FROM candidates")" ] || fail "a record was evaluated twice"
old=$(q "$tmp/a.db" "SELECT json_extract(m.value, '$.id') FROM events e,
        json_each(e.data, '$.moves') mv, json_each(mv.value, '$.migrants') m
        WHERE e.kind = 'migration' AND json_extract(e.data, '$.generation') = 4 LIMIT 1")
[ "$(q "$tmp/a.db" "SELECT generation <= 4 FROM candidates WHERE id = $old")" = 1 ] || fail "migrant #$old"

# Bad options name the option.
bad() {
    expect_exit 1 "$AVO" run "$script" --db "$tmp/bad.db" "$1"
    expect_in "$tmp/err" "$2"
}
bad islands=0 "islands: option 'islands' must be an integer >= 1, got 0"
bad migration_interval=0 "islands: option 'migration_interval' must be an integer >= 1, got 0"
bad migrants=5 "islands: option 'migrants' must be an integer in [1, population), got 5"
bad migrants=1.5 "islands: option 'migrants' must be an integer in [1, population), got 1.5"
bad topology=star "islands: option 'topology' must be \"ring\" or \"all\", got star"
bad population=1 "islands: option 'population' must be an integer >= 2, got 1"
bad generations=-1 "islands: option 'generations' must be an integer >= 0, got -1"

# Resume after kill -9 at two points gives the lineage of the run left alone.
export AVO_TEST_SLOW_MS=25
expect_exit 0 "$AVO" run "$script" --db "$tmp/full.db" --seed 3
lineage "$tmp/full.db" > "$tmp/full.txt"
for delay in 0.4 1.5; do
    db="$tmp/k$delay.db"
    "$AVO" run "$script" --db "$db" --seed 3 >/dev/null 2>&1 &
    pid=$!
    sleep "$delay"
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    [ "$(q "$db" "PRAGMA integrity_check")" = ok ] || fail "integrity_check"
    before=$(q "$db" "SELECT count(*) FROM candidates WHERE status <> 'pending'")
    [ "$before" -lt "$(q "$tmp/full.db" "SELECT count(*) FROM candidates")" ] ||
        fail "the run finished before the kill at $delay s"
    expect_exit 0 "$AVO" resume --db "$db"
    expect_in "$tmp/err" "$before finished evaluations kept"
    lineage "$db" > "$tmp/resumed.txt"
    cmp -s "$tmp/full.txt" "$tmp/resumed.txt" || {
        diff "$tmp/full.txt" "$tmp/resumed.txt" | head -5
        fail "resumed lineage differs from the uninterrupted run (kill at $delay s)"
    }
    [ "$(q "$db" "SELECT status FROM runs")" = done ] || fail "resumed run not done"
done
echo "islands: ok"
