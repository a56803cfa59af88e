#!/bin/sh
# Same seed and same scores give the same operator and parent choices; a
# different seed gives different ones.  Uses the deterministic test backend.
. "$(dirname "$0")/lib.sh"

lineage() {
    q "$1" "SELECT c.id, c.operator, c.knobs, c.source_hash,
                   (SELECT group_concat(parent || ':' || role, ',') FROM
                      (SELECT parent, role FROM edges WHERE child = c.id ORDER BY parent, role))
            FROM candidates c ORDER BY c.id"
}

expect_exit 0 "$AVO" run tests/lua/ga_synthetic.lua --db "$tmp/a.db" --seed 7 --jobs 2
expect_exit 0 "$AVO" run tests/lua/ga_synthetic.lua --db "$tmp/b.db" --seed 7 --jobs 1
expect_exit 0 "$AVO" run tests/lua/ga_synthetic.lua --db "$tmp/c.db" --seed 8 --jobs 2
lineage "$tmp/a.db" > "$tmp/a.txt"
lineage "$tmp/b.db" > "$tmp/b.txt"
lineage "$tmp/c.db" > "$tmp/c.txt"
[ "$(wc -l < "$tmp/a.txt")" -ge 20 ] || fail "expected a few generations of candidates"
cmp -s "$tmp/a.txt" "$tmp/b.txt" || { diff "$tmp/a.txt" "$tmp/b.txt" | head; fail "same seed, different lineage"; }
cmp -s "$tmp/a.txt" "$tmp/c.txt" && fail "different seeds gave the same lineage"
echo "determinism: ok"
