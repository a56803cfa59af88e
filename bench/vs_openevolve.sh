#!/bin/sh
# avo's llm_mutate against OpenEvolve 0.4.1 on engine throughput, runs
# alternating, both answered by the loopback fake LLM server
# (bench/vs_openevolve.py).  Needs a Python with openevolve 0.4.1
# (`python3 -m venv DIR && DIR/bin/pip install openevolve==0.4.1`), named by
# AVO_OE_PYTHON (default python3).
#
#   bench/vs_openevolve.sh build/avo [--counts 1000,10000] [--rounds 2] [--jobs 1]
set -eu
avo=$(realpath "$1")
shift
cd "$(dirname "$0")/.."
python=${AVO_OE_PYTHON:-python3}
if ! "$python" -c 'import openevolve' 2>/dev/null; then
    echo "vs_openevolve: no openevolve in $python: pip install openevolve==0.4.1 (or set AVO_OE_PYTHON)" >&2
    exit 1
fi
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
    [ $i -lt 100 ] || { echo "vs_openevolve: the fake LLM server did not start" >&2; exit 1; }
    sleep 0.05
done
"$python" bench/vs_openevolve.py "$avo" "http://127.0.0.1:$(cat "$tmp/port")/v1" "$@"
