#!/bin/sh
# `avo serve` over plain HTTP (issue 25): pages of two archives, escaped
# archive text, 404s, the no-script refresh, server-sent events pushed on a
# commit, the loopback Host check, the token off loopback, a read-only
# archive read by another user, and the refusals: bad --listen, a port in
# use, a missing or foreign --db.  SIGINT and SIGTERM stop it with 0.
. "$(dirname "$0")/lib.sh"
db="$tmp/a.db"
db2="$tmp/b.db"
expect_exit 0 "$AVO" run tests/lua/ga_synthetic.lua --db "$db" --jobs 2
expect_exit 0 "$AVO" run tests/lua/ga_synthetic.lua --db "$db2" --jobs 2
# Archive text that must reach every page escaped: in the best candidate's
# source and log, a failed candidate's reason, an experiment's name.
payload='</script><img src=x onerror=alert(1)>'
escaped='&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;'
best=$(q "$db" "SELECT id FROM candidates WHERE status = 'ok' ORDER BY score DESC, id LIMIT 1")
failed=$(q "$db" "SELECT id FROM candidates WHERE id <> $best ORDER BY id DESC LIMIT 1")
q "$db" "UPDATE candidates SET log = 'log: $payload' WHERE id = $best;
         UPDATE sources SET text = text || '/* $payload */'
           WHERE hash = (SELECT source_hash FROM candidates WHERE id = $best);
         UPDATE candidates SET status = 'crashed', score = 0, reason = 'reason: $payload'
           WHERE id = $failed;
         INSERT INTO experiments (name, path, source, hash, plan, created_at)
           VALUES ('grid $payload', 'grid.lua', '', 'h', '[\"one\"]', 1);
         INSERT INTO experiment_cells (experiment_id, cell, run_id, status, updated_at)
           VALUES (1, 'one', 1, 'done', 2);
         PRAGMA wal_checkpoint(TRUNCATE);" >/dev/null
# The second archive's run is still running, as far as its pages know.
q "$db2" "UPDATE runs SET status = 'running', ended_at = NULL"
n_cands=$(q "$db" "SELECT count(*) FROM candidates")

# -- refusals
expect_exit 0 "$AVO" serve --help
expect_in "$tmp/out" "usage: avo serve [--db FILE ...] [--listen HOST:PORT]"
for bad in foo 127.0.0.1 127.0.0.1:99999 :8470 127.0.0.1:abc '[::1]8470' 127.0.0.1:-1; do
    expect_exit 2 "$AVO" serve --db "$db" --listen "$bad"
    expect_in "$tmp/err" "bad --listen '$bad'"
    expect_in "$tmp/err" "expected HOST:PORT"
done
expect_exit 1 "$AVO" serve --db "$db" --listen 192.0.2.1:0
expect_in "$tmp/err" "cannot listen on 192.0.2.1:0"
expect_exit 1 "$AVO" serve --db "$db" --db "$tmp/missing.db" --listen 127.0.0.1:0
expect_in "$tmp/err" "cannot open archive $tmp/missing.db: No such file or directory"
: >"$tmp/empty.db"
expect_exit 1 "$AVO" serve --db "$tmp/empty.db" --listen 127.0.0.1:0
expect_in "$tmp/err" "is not an avo archive"
expect_exit 2 "$AVO" serve --db "$db" extra
expect_in "$tmp/err" "unexpected argument 'extra'"

# -- two archives on loopback
start_serve a --db "$db" --db "$db2" --listen 127.0.0.1:0
case "$url" in http://127.0.0.1:[0-9]*/) ;; *) fail "unexpected URL $url" ;; esac
expect_in "$tmp/a.err" "serving 2 archive(s) at $url"
expect_status 200 "$url"
expect_in "$tmp/body" "$db"
expect_in "$tmp/body" "$db2"
expect_in "$tmp/body" 'href="/a/0/run/1"'
expect_in "$tmp/body" 'href="/a/1/run/1"'
expect_in "$tmp/body" 'href="/a/0/experiment/1"'
expect_in "$tmp/body" "grid $escaped"
expect_in "$tmp/headers" "content-security-policy: default-src 'none'; script-src 'self'"
expect_in "$tmp/headers" "content-type: text/html; charset=utf-8"
grep -q "<img" "$tmp/body" && fail "unescaped markup on the index"

# A run page: every candidate, the report's sections, the live ones.
expect_status 200 "${url}a/0/run/1"
[ "$(grep -o 'data-cand="' "$tmp/body" | wc -l)" = "$n_cands" ] || fail "not every candidate is listed"
for needle in "Trajectory" "Score per generation" "Lineage of the best candidate" "Top versions" \
    "In flight (<span class=\"n-pending\">0</span>)" "Budgets" "Recent failures" \
    "reason: $escaped" 'data-events="/a/0/events"' 'src="/assets/live.js"' \
    "<a href=\"/a/0/c/$best\">#$best</a>" "run-status\">done</span>" "LLM spend"; do
    expect_in "$tmp/body" "$needle"
done
grep -q "<img" "$tmp/body" && fail "unescaped markup on the run page"
# A finished run's page does not refresh itself; a running one does, in <noscript>.
grep -q 'http-equiv="refresh"' "$tmp/body" && fail "a finished run's page refreshes itself"
expect_status 200 "${url}a/1/run/1"
expect_in "$tmp/body" '<noscript><meta http-equiv="refresh" content="5"/></noscript>'
expect_in "$tmp/body" 'status-running'
# The main part alone, as the script fetches it.
expect_status 200 "${url}a/0/run/1?part=main"
grep -q "<html" "$tmp/body" && fail "?part=main sent a whole page"
expect_in "$tmp/body" "data-cand=\"$best\""

# A candidate page: source and log escaped, per-config results, the diff.
expect_status 200 "${url}a/0/c/$best"
expect_in "$tmp/body" "/* $escaped */"
expect_in "$tmp/body" "log: $escaped"
expect_in "$tmp/body" "<th>config</th><th>correct</th>"
grep -q "<img" "$tmp/body" && fail "unescaped markup on the candidate page"
child=$(q "$db" "SELECT child FROM edges ORDER BY child DESC LIMIT 1")
expect_status 200 "${url}a/0/c/$child"
expect_in "$tmp/body" "diff against parent #"
expect_status 200 "${url}a/0/experiment/1"
expect_in "$tmp/body" 'href="/a/0/run/1"'
expect_in "$tmp/body" 'data-events="/a/0/events" data-part="/a/0/experiment/1?part=main"'
expect_in "$tmp/body" "experiment 1: grid $escaped"
grep -q 'http-equiv="refresh"' "$tmp/body" && fail "a finished experiment's page refreshes itself"

# Not found: a candidate, run, experiment or archive that is not there.
expect_status 404 "${url}a/0/c/999999"
expect_in "$tmp/body" "no candidate 999999 in $db"
expect_status 404 "${url}a/0/run/77"
expect_status 404 "${url}a/0/experiment/9"
expect_status 404 "${url}a/2/run/1"
expect_status 404 "${url}a/0/c/1x"
expect_status 404 "${url}nothing"
expect_status 200 "${url}assets/live.js"
expect_in "$tmp/headers" "content-type: text/javascript"
expect_status 404 "${url}assets/nothing.js"
# A percent-encoding that decodes to NUL (or another control byte), a
# malformed one and one that is not UTF-8: 400, never the page or asset
# named by what comes before the NUL.
for bad in a/0/c/1%00 assets/live.js%00.css a/0/run/1%00/x a/0/c/1%0a a/0/c/1%1b%5b2J \
    a/0/c/1%7f a/0/c/1%zz a/0/c/1%4 a/0/c/1% a/0/c/1%ff a/0/c/1%c0%af a/0/c/1%ed%a0%80 \
    %00 a/0/c/%00 assets/live.js%00; do
    expect_status 400 "${url}$bad"
    expect_in "$tmp/body" "percent-encoding is malformed or decodes to a control byte"
done
# ... while ordinary escapes (and UTF-8) still decode
expect_status 200 "${url}a/0/c/%31"
expect_status 200 "${url}assets/live%2ejs"
expect_status 404 "${url}a/0/c/%c3%a9"

# DNS rebinding: a loopback server answers loopback Host names only.
port=${url#http://127.0.0.1:}; port=${port%/}
expect_status 403 "$url" "Host: attacker.example:$port"
expect_in "$tmp/body" "localhost, 127.0.0.1 or [::1] only"
expect_status 200 "$url" "Host: localhost:$port"

# Server-sent events: the state when the stream opens, then a new one when
# a commit changes the archive; the pages show the commit (a page is made
# again once its archive has changed, not before).
expect_status 200 "${url}a/0/run/1"
grep -q "pushed by the test" "$tmp/body" && fail "the log line is there before it is written"
cp "$tmp/body" "$tmp/before.html"
sleep 1.1 # a page made again would say another second in its footer
expect_status 200 "${url}a/0/run/1"
cmp -s "$tmp/body" "$tmp/before.html" || fail "an unchanged archive's page was made again"
python3 - "${url}a/0/events" "$db" <<'PY'
import http.client, sqlite3, sys, time, urllib.parse
u = urllib.parse.urlsplit(sys.argv[1])
conn = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
conn.request("GET", u.path)
r = conn.getresponse()
assert r.status == 200, r.status
assert r.getheader("content-type").startswith("text/event-stream"), r.getheader("content-type")
def event():
    lines = []
    while True:
        line = r.fp.readline().decode()
        if line == "\n" and any(l.startswith("data: ") for l in lines):
            return [l[6:].strip() for l in lines if l.startswith("data: ")][0], lines
        lines.append(line)
first, lines = event()
assert "event: change\n" in lines, lines
db = sqlite3.connect(sys.argv[2])
db.execute("INSERT INTO events (run_id, t, kind, data) VALUES (1, 0, 'log', '{\"message\": \"pushed by the test\"}')")
db.commit()
t0 = time.time()
second, _ = event()
assert second != first, (first, second)
print("second event after %.2f s" % (time.time() - t0))
PY
expect_status 200 "${url}a/0/run/1"
expect_in "$tmp/body" "pushed by the test"
stop_serve TERM

# -- a port in use; other methods; an archive gone; stopping with a stream open
cp "$db" "$tmp/gone.db"
start_serve b --db "$db" --db "$tmp/gone.db" --listen 127.0.0.1:0
port=${url#http://127.0.0.1:}; port=${port%/}
expect_exit 1 "$AVO" serve --db "$db" --listen "127.0.0.1:$port"
expect_in "$tmp/err" "cannot listen on 127.0.0.1:$port: the address is in use"
python3 - "$url" <<'PY'
import http.client, sys, urllib.parse
u = urllib.parse.urlsplit(sys.argv[1])
for method in ("POST", "PUT", "DELETE"):
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
    c.request(method, "/a/0/run/1", body="x")
    r = c.getresponse()
    assert r.status == 405, (method, r.status)
    assert b"GET and HEAD only" in r.read()
PY
rm "$tmp/gone.db"
expect_status 503 "${url}a/1/run/1"
expect_in "$tmp/body" "cannot open archive $tmp/gone.db"
expect_status 200 "$url"
expect_in "$tmp/body" "cannot read it: cannot open archive $tmp/gone.db"
# A client holding an event stream does not keep the server from stopping.
python3 - "${url}events" >"$tmp/stream.out" 2>&1 <<'PY' &
import http.client, sys, urllib.parse
u = urllib.parse.urlsplit(sys.argv[1])
c = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
c.request("GET", u.path)
r = c.getresponse()
while r.fp.readline():
    pass
print("stream ended")
PY
client=$!
sleep 1
stop_serve INT
wait $client
expect_in "$tmp/stream.out" "stream ended"

# -- off loopback: the token, then the cookie
start_serve c --db "$db" --listen 0.0.0.0:0
case "$url" in http://0.0.0.0:[0-9]*/?token=[0-9a-f]*) ;; *) fail "no token in $url" ;; esac
expect_in "$tmp/c.err" "the token in the URL is needed"
token=${url#*token=}
port=${url#http://0.0.0.0:}; port=${port%%/*}
base="http://127.0.0.1:$port/"
expect_status 403 "$base"
expect_in "$tmp/body" "needs the access token"
expect_status 403 "${base}a/0/run/1"
expect_status 403 "${base}a/0/events"
expect_status 403 "${base}?token=${token}x"
expect_status 403 "${base}" "Cookie: avo_token=nottheone"
expect_status 200 "${base}?token=$token"
expect_in "$tmp/headers" "set-cookie: avo_token=$token; Path=/; HttpOnly; SameSite=Strict"
expect_status 200 "${base}a/0/run/1" "Cookie: avo_token=$token"
expect_in "$tmp/body" "data-cand=\"$best\""
expect_status 200 "${base}assets/live.css"
stop_serve INT

# -- a read-only copy, read by another user: nothing made beside it
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
    mkdir "$tmp/ro"
    cp "$db" "$tmp/ro/a.db"
    chmod 444 "$tmp/ro/a.db"
    chmod 555 "$tmp/ro"
    chmod 755 "$tmp"
    before=$(ls -A "$tmp/ro" | tr '\n' ' ')
    name=ro
    setpriv --reuid=nobody --regid=nogroup --clear-groups \
        "$(nobody_avo)" serve --db "$tmp/ro/a.db" --listen 127.0.0.1:0 >"$tmp/ro.out" 2>"$tmp/ro.err" &
    serve_pid=$!
    i=0
    while ! grep -q '^http' "$tmp/ro.out" 2>/dev/null; do
        i=$((i + 1)); [ $i -lt 100 ] || { cat "$tmp/ro.err"; fail "serve as nobody did not start"; }
        sleep 0.1
    done
    url=$(head -1 "$tmp/ro.out")
    expect_status 200 "${url}a/0/run/1"
    [ "$(grep -o 'data-cand="' "$tmp/body" | wc -l)" = "$n_cands" ] || fail "the read-only copy shows fewer candidates"
    expect_status 200 "${url}a/0/c/$best"
    expect_in "$tmp/body" "log: $escaped"
    stop_serve INT
    [ "$(ls -A "$tmp/ro" | tr '\n' ' ')" = "$before" ] || fail "files were made beside the read-only archive: $(ls -A "$tmp/ro")"
    chmod 755 "$tmp/ro"
else
    echo "note: not root or no setpriv: the read-only copy was not read as another user"
fi
echo "serve cli: ok"
