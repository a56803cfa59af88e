# Shared helpers for the serve tests (sourced): the e2e helpers, plus
# starting and stopping `avo serve` and one HTTP GET.
. "$AVO_SOURCE_ROOT/tests/e2e/lib.sh"

# wait_for DB SQL: until the query answers non-zero (at most 30 s)
wait_for() {
    i=0
    while ! [ -s "$1" ] || [ "$(q "$1" "$2" 2>/dev/null || echo 0)" = 0 ]; do
        i=$((i + 1))
        [ $i -lt 300 ] || fail "timed out waiting for: $2"
        sleep 0.1
    done
}

# start_serve NAME ARGS...: start `avo serve ARGS` in the background; its
# URL in $url, its pid in $serve_pid, its output in $tmp/NAME.out/.err.
start_serve() {
    name=$1; shift
    "$AVO" serve "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" &
    serve_pid=$!
    i=0
    while ! grep -q '^http' "$tmp/$name.out" 2>/dev/null; do
        i=$((i + 1))
        if [ $i -ge 100 ] || ! kill -0 $serve_pid 2>/dev/null; then
            cat "$tmp/$name.err"; fail "avo serve $* did not print its URL"
        fi
        sleep 0.1
    done
    url=$(head -1 "$tmp/$name.out")
}

# stop_serve SIGNAL: stop the server started last; it must exit 0 at once.
stop_serve() {
    kill -"$1" $serve_pid
    i=0
    while kill -0 $serve_pid 2>/dev/null; do
        i=$((i + 1))
        [ $i -lt 100 ] || { kill -9 $serve_pid; fail "avo serve did not stop on SIG$1 in 10 s"; }
        sleep 0.1
    done
    set +e; wait $serve_pid; got=$?; set -e
    [ $got = 0 ] || { cat "$tmp/$name.err"; fail "avo serve exited $got on SIG$1"; }
    expect_in "$tmp/$name.err" "serve stopped (SIG$1)"
}

# expect_status CODE URL [HEADER: VALUE]...
expect_status() {
    want=$1; target=$2; shift 2
    python3 "$AVO_SOURCE_ROOT/tests/serve/get.py" "$target" "$tmp/body" "$@" >"$tmp/headers" ||
        fail "cannot reach $target"
    status=$(head -1 "$tmp/headers")
    [ "$status" = "$want" ] ||
        { head -c 2000 "$tmp/body"; fail "GET $target answered $status, expected $want"; }
}

# chrome: Debian's chromium, or skip (77) saying it is missing.
need_chromium() {
    chrome=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
    if [ -z "$chrome" ]; then
        echo "skip: chromium is not installed (tools/install-deps --tests installs it)"
        exit 77
    fi
}
