# Sourced by the bench scripts: the variables that change which kernel
# OpenBLAS runs, and on how many threads, set to avo's own values (the ones
# eval/cpu/cpulib.c gives every candidate process): the core and L2 size
# OpenBLAS detects for this CPU (OPENBLAS_CORETYPE, OPENBLAS_L2_SIZE and
# OPENBLAS_BLOCK_FACTOR unset), OPENBLAS_VERBOSE=0, one thread. A value the
# caller's environment had otherwise is named on stderr, never silently used:
# with OPENBLAS_CORETYPE=Haswell a script would compare against the AVX2
# kernel on an AVX-512 machine.
openblas_env_note=""
for v in OPENBLAS_CORETYPE OPENBLAS_L2_SIZE OPENBLAS_BLOCK_FACTOR; do
    eval "val=\${$v-}"
    if [ -n "$val" ]; then
        openblas_env_note="$openblas_env_note $v=$val"
        unset "$v"
    fi
done
for v in OPENBLAS_VERBOSE:0 OPENBLAS_NUM_THREADS:1 OMP_NUM_THREADS:1 GOTO_NUM_THREADS:1 \
         MKL_NUM_THREADS:1 BLIS_NUM_THREADS:1; do
    name=${v%%:*} want=${v#*:}
    eval "val=\${$name-}"
    if [ -n "$val" ] && [ "$val" != "$want" ]; then
        openblas_env_note="$openblas_env_note $name=$val"
    fi
    export "$name=$want"
done
if [ -n "$openblas_env_note" ]; then
    echo "$(basename "$0"): not used from the environment:$openblas_env_note" \
         "(OpenBLAS runs its detected core, one thread)" >&2
fi
unset v val name want
