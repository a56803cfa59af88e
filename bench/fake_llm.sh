# bench/fake_llm.sh — sourced by the LLM benchmarks (throughput.sh,
# vs_openevolve.sh, llm_cost.sh): starts tests/llm/fake_server.py on a
# loopback port and makes a temporary folder, both gone when the script
# exits.  Run from the repository root.
#   start_fake_llm NAME   sets tmp, server (its pid), FAKE_LLM_KEY and
#                         fake_base (the server's /v1 URL); NAME prefixes
#                         the error when it does not start
start_fake_llm() {
    tmp=$(mktemp -d)
    unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY all_proxy
    FAKE_LLM_KEY="sk-bench-$$"
    export FAKE_LLM_KEY
    python3 tests/llm/fake_server.py "$tmp/port" &
    server=$!
    trap 'kill $server 2>/dev/null; rm -rf "$tmp"' EXIT
    i=0
    while [ ! -s "$tmp/port" ]; do
        i=$((i + 1))
        [ $i -lt 100 ] || { echo "$1: the fake LLM server did not start" >&2; exit 1; }
        sleep 0.05
    done
    fake_base="http://127.0.0.1:$(cat "$tmp/port")/v1"
}
