#!/bin/sh
# kill -9 at random points, again and again, each time resumed: the archive
# stays whole, no finished evaluation is lost or repeated, and the final
# lineage is exactly the lineage of the same run left alone.
. "$(dirname "$0")/lib.sh"
seed=${AVO_FAULT_SEED:-$(date +%s)}
echo "kill points drawn with seed $seed (AVO_FAULT_SEED=$seed repeats them)"
expect_exit 0 "$AVO" run tests/lua/ga_synthetic.lua --db "$tmp/full.db" --seed 7
lineage "$tmp/full.db" > "$tmp/full.txt"
# Delays in seconds from 0.05 to 1.0, from the seed.
awk -v s="$seed" 'BEGIN { srand(s); for (i = 0; i < 8; i++) printf "%.2f\n", 0.05 + rand() * 0.95 }' \
    > "$tmp/delays"
db="$tmp/k.db"
# A kill before the run is recorded leaves nothing to resume ("no run in"):
# the user starts it again, and so does this loop.
recorded() { [ -f "$db" ] && [ "$(q "$db" "SELECT count(*) FROM runs" 2>/dev/null)" = 1 ]; }
while read -r delay; do
    if ! recorded; then
        "$AVO" run tests/lua/ga_synthetic.lua --db "$db" --seed 7 >/dev/null 2>&1 &
    else
        "$AVO" resume --db "$db" >/dev/null 2>&1 &
    fi
    pid=$!
    sleep "$delay"
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    recorded || continue
    whole "$db"
    q "$db" "SELECT id, evaluated_at FROM candidates WHERE status <> 'pending' ORDER BY id" \
        > "$tmp/before.txt"
    # What finished before this kill is still there, unchanged.
    if [ -f "$tmp/prev.txt" ]; then
        head -n "$(wc -l < "$tmp/prev.txt")" "$tmp/before.txt" > "$tmp/head.txt"
        cmp -s "$tmp/prev.txt" "$tmp/head.txt" || fail "a finished evaluation changed (kill after ${delay}s)"
    fi
    cp "$tmp/before.txt" "$tmp/prev.txt"
done < "$tmp/delays"
if ! recorded; then
    expect_exit 0 "$AVO" run tests/lua/ga_synthetic.lua --db "$db" --seed 7
elif [ "$(q "$db" "SELECT status FROM runs")" != done ]; then
    expect_exit 0 "$AVO" resume --db "$db"
fi
whole "$db"
lineage "$db" > "$tmp/resumed.txt"
cmp -s "$tmp/full.txt" "$tmp/resumed.txt" || {
    diff "$tmp/full.txt" "$tmp/resumed.txt" | head -5
    fail "lineage after repeated kill -9 and resume differs from the run left alone (seed $seed)"
}
echo "kill_loop: ok"
