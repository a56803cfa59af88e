#!/bin/sh
# GPU tests: skipped (exit 77) until the CUDA backend lands, and on machines
# without an NVIDIA driver.
if [ ! -e /dev/nvidiactl ] && ! ls /usr/lib/x86_64-linux-gnu/libcuda.so.1 >/dev/null 2>&1; then
    echo "skip: no NVIDIA driver on this machine"
    exit 77
fi
echo "skip: the CUDA backend is not built yet"
exit 77
