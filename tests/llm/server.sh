# Start tests/llm/fake_server.py on a loopback port (sourced after
# tests/e2e/lib.sh).  Sets FAKE_BASE and FAKE_LLM_KEY; the server dies with
# the test.
start_fake_server() {
    unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY all_proxy
    FAKE_LLM_KEY="sk-test-$$-SECRET-7f3a9c"
    export FAKE_LLM_KEY
    python3 "$AVO_SOURCE_ROOT/tests/llm/fake_server.py" "$tmp/port" &
    fake_pid=$!
    trap 'kill $fake_pid 2>/dev/null; rm -rf "$tmp"' EXIT
    i=0
    while [ ! -s "$tmp/port" ]; do
        i=$((i + 1))
        [ $i -lt 100 ] || fail "fake LLM server did not start"
        sleep 0.05
    done
    FAKE_BASE="http://127.0.0.1:$(cat "$tmp/port")"
}
