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
. bench/fake_llm.sh
start_fake_llm vs_openevolve
"$python" bench/vs_openevolve.py "$avo" "$fake_base" "$@"
