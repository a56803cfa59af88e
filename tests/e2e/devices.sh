#!/bin/sh
# One timing worker per GPU (--devices; default every visible GPU) against a
# mock driver with three devices (tests/mock): CUDA candidates spread over
# all of them, each device held by one process at a time (the mock's lock
# files would record a second holder), compiles run on the CPU worker (the
# GPU workers find every cubin cached), every result records its device,
# --devices picks a subset, and bad --devices values are refused clearly.
# Needs NVRTC (skip 77).
. "$(dirname "$0")/lib.sh"
if ! "$AVO" doctor | grep -q "^NVRTC  *[0-9]"; then
    echo "skip: NVRTC not available"; exit 77
fi
[ -n "${AVO_MOCK_CUDA_DIR:-}" ] || fail "AVO_MOCK_CUDA_DIR is not set"
export LD_LIBRARY_PATH="$AVO_MOCK_CUDA_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export AVO_MOCK_DEVICES=3
export AVO_MOCK_DEVICE_DIR="$tmp/locks"
mkdir -p "$AVO_MOCK_DEVICE_DIR"
script=tests/e2e/devices_run.lua
"$AVO" doctor >"$tmp/doctor"
expect_in "$tmp/doctor" "avo mock GPU 2"

devices_used() { q "$1" "SELECT group_concat(d) FROM (SELECT DISTINCT json_extract(result,
    '\$.worker.device') AS d FROM candidates ORDER BY d)"; }

# Default: one timing worker per visible device, all three used.
expect_exit 0 "$AVO" run $script --db "$tmp/all.db" --jobs 1 --retime 0  # its own re-timing would be a rebench set
expect_in "$tmp/out" "devices run: ok"
[ "$(devices_used "$tmp/all.db")" = "0,1,2" ] ||
    fail "expected devices 0,1,2 used, got $(devices_used "$tmp/all.db")"
# Compiles ran on the CPU worker: every timing worker found its cubin cached.
[ "$(q "$tmp/all.db" "SELECT count(*) FROM candidates WHERE json_extract(result,
    '\$.cache_hit') = 1")" = 9 ] || fail "a GPU worker compiled a candidate itself"
[ ! -e "$AVO_MOCK_DEVICE_DIR/shared" ] || { cat "$AVO_MOCK_DEVICE_DIR/shared";
    fail "two timing workers shared a GPU"; }
[ "$(q "$tmp/all.db" "SELECT count(*) FROM candidates WHERE json_extract(result,
    '\$.device.name') LIKE 'avo mock GPU%'")" = 9 ] || fail "results lack the device description"

# A subset; CUDA_VISIBLE_DEVICES numbering is the driver's (the mock ignores it).
rm -f "$AVO_MOCK_DEVICE_DIR"/*
expect_exit 0 "$AVO" run $script --db "$tmp/two.db" --jobs 1 --devices 2
[ "$(devices_used "$tmp/two.db")" = "2" ] || fail "expected only device 2, got $(devices_used "$tmp/two.db")"

# Two workers on one GPU only when asked; the mock's lock proves the check works.
rm -f "$AVO_MOCK_DEVICE_DIR"/*
expect_exit 0 "$AVO" run $script --db "$tmp/same.db" --jobs 1 --devices 0,0
expect_in "$AVO_MOCK_DEVICE_DIR/shared" "gpu 0 shared by pid"

expect_exit 2 "$AVO" run $script --db "$tmp/bad.db" --devices 5
expect_in "$tmp/err" "--devices 5: only 3 CUDA devices are visible (0 to 2"
expect_exit 2 "$AVO" run $script --db "$tmp/bad.db" --devices 1,x
expect_in "$tmp/err" "--devices needs CUDA device numbers like 0,2,5 (or 'none'), got '1,x'"
expect_exit 2 env AVO_MOCK_DEVICES=0 "$AVO" run $script --db "$tmp/bad.db" --devices 0
expect_in "$tmp/err" "no CUDA device is visible"
# avo rebench times each candidate on every GPU and compares them.
expect_exit 0 "$AVO" rebench --db "$tmp/all.db" --top 2 --rounds 2
expect_in "$tmp/out" "per device (mean +- std GB/s; ratio to gpu 0):"
expect_in "$tmp/out" "gpu 2"
[ "$(q "$tmp/all.db" "SELECT count(*) FROM rebench_results")" = 12 ] ||
    fail "expected 2 candidates x 2 rounds x 3 GPUs in the rebench set"
[ "$(q "$tmp/all.db" "SELECT count(DISTINCT json_extract(result, '\$.worker.device'))
    FROM rebench_results")" = 3 ] || fail "the rebench set should cover all three GPUs"
expect_exit 0 "$AVO" rebench --db "$tmp/all.db" --top 1 --rounds 1 --devices 1,2
expect_in "$tmp/out" "gpu 1"
expect_exit 2 "$AVO" rebench --db "$tmp/all.db" --devices 7
expect_in "$tmp/err" "--devices 7: only 3 CUDA devices"

# avo report has a per-device section.
expect_exit 0 "$AVO" report --db "$tmp/all.db" -o "$tmp/report.html"
expect_in "$tmp/report.html" "<h2 id=\"devices\">Devices</h2>"
expect_in "$tmp/report.html" "<td>local GPU 2 (avo mock GPU 2)</td>"
echo "devices: ok"
