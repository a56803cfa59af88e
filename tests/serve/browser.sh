#!/bin/sh
# `avo serve` in a real browser (issue 25): headless Chromium watches a run's
# page while the run writes its archive; the page grows by server-sent
# events without a reload; without JavaScript it refreshes itself and still
# shows every candidate; a candidate page shows kernel source and log that
# try to break out of the page as text, as `avo report` does.  Screenshots
# go to $AVO_TEST_LOGDIR (meson-logs/serve under meson), printed below.
. "$(dirname "$0")/lib.sh"
need_chromium
shots=${AVO_TEST_LOGDIR:-$tmp/shots}
mkdir -p "$shots"
echo "screenshots: $shots"
db="$tmp/live.db"

# A run whose candidates arrive over seconds.
AVO_TEST_SLOW_MS=150 "$AVO" run tests/serve/slow_ga.lua --db "$db" --jobs 1 >"$tmp/run.out" 2>&1 &
run_pid=$!
wait_for "$db" "SELECT count(*) >= 3 FROM candidates WHERE status <> 'pending'"
start_serve live --db "$db" --listen 127.0.0.1:0

# With JavaScript: rows arrive through server events, the page is not reloaded.
CHROME=$chrome python3 tests/serve/cdp.py live "${url}a/0/run/1" "$shots/run-live.png" ||
    { cat "$tmp/live.err"; fail "the live page did not follow the run"; }

# Off loopback, the token in the URL once: the page's script, event stream
# and fetches go on with the cookie it set.
loopback_url=$url
loopback_pid=$serve_pid
start_serve token --db "$db" --listen 0.0.0.0:0
token=${url#*token=}
port=${url#http://0.0.0.0:}; port=${port%%/*}
CHROME=$chrome python3 tests/serve/cdp.py live "http://127.0.0.1:$port/a/0/run/1?token=$token" \
    "$shots/run-token.png" || { cat "$tmp/token.err"; fail "the page with a token did not follow the run"; }
stop_serve TERM
url=$loopback_url
serve_pid=$loopback_pid
name=live

# Without JavaScript: the page refreshes itself; each load shows more.
dump() {
    CHROME=$chrome python3 tests/serve/cdp.py nojs "$2" "$tmp/$1.html" || fail "cannot load $2"
}
dump nojs1 "${url}a/0/run/1"
n1=$(grep -o 'data-cand="' "$tmp/nojs1.html" | wc -l)
expect_in "$tmp/nojs1.html" 'http-equiv="refresh"'
expect_in "$tmp/nojs1.html" "Trajectory"
have=$(q "$db" "SELECT count(*) FROM candidates")
wait_for "$db" "SELECT count(*) >= $have + 2 FROM candidates"
dump nojs2 "${url}a/0/run/1"
n2=$(grep -o 'data-cand="' "$tmp/nojs2.html" | wc -l)
[ "$n2" -gt "$n1" ] || fail "a second load without JavaScript shows $n2 candidates, the first $n1"
echo "without JavaScript: $n1 then $n2 candidates"

# Stop the run; plant source and log that try to break out of the page.
kill -INT $run_pid
wait $run_pid || true
payload='</script><img src=x onerror=alert(1)>'
best=$(q "$db" "SELECT id FROM candidates WHERE status = 'ok' ORDER BY score DESC, id LIMIT 1")
q "$db" "UPDATE candidates SET log = 'log: $payload' WHERE id = $best;
         UPDATE sources SET text = text || '/* $payload */'
           WHERE hash = (SELECT source_hash FROM candidates WHERE id = $best)"
dump cand "${url}a/0/c/$best"
python3 - "$tmp/cand.html" <<'PY'
import sys
dom = open(sys.argv[1], encoding="utf-8").read()
esc = "&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;"
assert "/* " + esc + " */" in dom, "the source is not shown escaped"
assert "log: " + esc in dom, "the log is not shown escaped"
assert "<img" not in dom, "the payload became an element"
PY
timeout 60 "$chrome" --headless=new --no-sandbox --disable-gpu --hide-scrollbars \
    --user-data-dir="$tmp/chrome-shot" --window-size=1280,2000 --screenshot="$shots/candidate.png" \
    "${url}a/0/c/$best" >"$tmp/chrome-shot.log" 2>&1 || { cat "$tmp/chrome-shot.log"; fail "screenshot failed"; }
[ -s "$shots/candidate.png" ] || fail "no candidate screenshot"
timeout 60 "$chrome" --headless=new --no-sandbox --disable-gpu --hide-scrollbars \
    --user-data-dir="$tmp/chrome-shot" --window-size=1280,1200 --screenshot="$shots/index.png" \
    "$url" >"$tmp/chrome-shot.log" 2>&1 || { cat "$tmp/chrome-shot.log"; fail "screenshot failed"; }

# The static report of the same archive escapes them alike.
expect_exit 0 "$AVO" report --db "$db" -o "$tmp/report.html"
expect_in "$tmp/report.html" "/* &lt;/script&gt;&lt;img src=x onerror=alert(1)&gt; */"
grep -q "<img" "$tmp/report.html" && fail "the report has the payload as markup"
stop_serve INT
ls -l "$shots"
echo "serve browser: ok"
