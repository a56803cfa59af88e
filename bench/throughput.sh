#!/bin/sh
# Flat per-candidate cost as runs grow: PT_COUNT candidates (default
# 100000) of a trivial kernel with ga + param_tweak, then LLM_COUNT
# (default 20000) with ga + llm_mutate against the loopback fake LLM server
# (tests/llm/fake_server.py, model "mutate-bench": a fresh rewrite of the
# parent every call).  The kernel is scored in-process (the test backend), so
# the engine alone is timed.  Prints evaluations/s per tenth of each run (per
# wall second and per engine CPU second; the last tenth against the first is
# the ratio to watch), the engine's peak RSS, archive bytes per candidate,
# and the time `avo runs`, `avo best`, `avo report` and one `avo serve` page
# take on each archive (bench/throughput.py).
#
#   meson compile -C build bench-throughput
#   bench/throughput.sh build/avo [PT_COUNT] [LLM_COUNT]
set -eu
avo=$(realpath "$1")
pt=${2:-100000}
llm=${3:-20000}
cd "$(dirname "$0")/.."
. bench/fake_llm.sh
start_fake_llm throughput
python3 bench/throughput.py "$avo" "$tmp" "$pt" "$llm" "$fake_base"
