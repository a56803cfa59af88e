#!/bin/sh
# The run's page on a large archive: wall time and peak RSS of `avo report`
# (the HTML of run 1) and of `avo serve`'s first GET of /a/0/run/1 (a fresh
# server each time, so nothing is cached), for an OLD and a NEW binary on
# the same archive, alternating, ROUNDS rounds; prints each round and the
# medians with the ratios new/old.  The archive is copied first: neither
# binary writes to the one given.
#
#   bench/views.sh OLD_AVO NEW_AVO ARCHIVE.db [ROUNDS]
set -eu
[ $# -ge 3 ] || { sed -n '2,9p' "$0"; exit 2; }
old=$(realpath "$1") new=$(realpath "$2") db=$3 rounds=${4:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$db" "$tmp/a.db"
for x in wal shm; do [ ! -e "$db-$x" ] || cp "$db-$x" "$tmp/a.db-$x"; done

# report AVO: "seconds KiB" of one `avo report`
report() {
    /usr/bin/time -f '%e %M' -o "$tmp/time" "$1" report --db "$tmp/a.db" --run 1 \
        -o "$tmp/report.html" >/dev/null 2>&1
    cat "$tmp/time"
}

# serve AVO: "seconds KiB" of the first GET of run 1's page (the server's
# peak RSS, VmHWM, once the page is read)
serve() {
    "$1" serve --db "$tmp/a.db" --listen 127.0.0.1:0 >"$tmp/url" 2>/dev/null &
    pid=$!
    i=0
    while ! grep -q '^http' "$tmp/url" 2>/dev/null; do
        i=$((i + 1))
        [ $i -lt 200 ] || { kill $pid; echo "views.sh: serve did not start" >&2; exit 1; }
        sleep 0.05
    done
    url=$(head -1 "$tmp/url" | sed 's#/$##')
    s=$(curl -s -o "$tmp/page.html" -w '%{time_total}' "$url/a/0/run/1")
    kb=$(awk '/^VmHWM/ {print $2}' "/proc/$pid/status")
    kill $pid
    wait $pid 2>/dev/null || true
    echo "$s $kb"
}

: >"$tmp/results"
for r in $(seq "$rounds"); do
    for who in old new; do
        bin=$old
        [ "$who" = new ] && bin=$new
        echo "$r $who report $(report "$bin")" >>"$tmp/results"
        echo "$r $who serve $(serve "$bin")" >>"$tmp/results"
    done
done
cat "$tmp/results"
python3 - "$tmp/results" "$db" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
med = {}
for what in ("report", "serve"):
    for who in ("old", "new"):
        sel = [r for r in rows if r[1] == who and r[2] == what]
        med[who, what] = (statistics.median(float(r[3]) for r in sel),
                          statistics.median(float(r[4]) for r in sel) / 1024)
print("%s, medians of %d rounds:" % (sys.argv[2], len(rows) // 4))
for what in ("report", "serve"):
    (ot, om), (nt, nm) = med["old", what], med["new", what]
    print("  %-6s old %.2f s %4.0f MiB   new %.2f s %4.0f MiB   new/old time %.2f  memory %.2f"
          % (what, ot, om, nt, nm, nt / ot, nm / om))
PY
