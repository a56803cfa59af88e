/*
 * cpulib.h — a C library function as a CPU baseline (docs/evaluators.md,
 * "Library baselines"): the evaluator names a shared library, the symbol its
 * call adapter calls, and no-argument functions of the library that say
 * what it is (OpenBLAS: openblas_get_config, openblas_get_corename,
 * openblas_get_num_threads).  The adapter itself is compiled, verified and
 * timed like any candidate; this module answers, before that, whether the
 * library is there and what it is.
 *
 * The library is loaded in a throwaway child process (its constructors and
 * threads never touch the worker) with the environment the candidate
 * process gets (avo_cpulib_thread_env), so what it reports (core type,
 * thread count) is what the timed calls run with.
 */
#ifndef AVO_CPULIB_H
#define AVO_CPULIB_H

#include <jansson.h>
#include <stddef.h>

/*
 * Set the variables that bound the threads a BLAS or OpenMP library starts
 * (OPENBLAS_NUM_THREADS, OMP_NUM_THREADS, GOTO_NUM_THREADS, MKL_NUM_THREADS,
 * BLIS_NUM_THREADS) to `threads` in this process's environment, and those
 * that change which kernel OpenBLAS runs to avo's own values: the core and
 * cache sizes OpenBLAS detects for this CPU (OPENBLAS_CORETYPE and
 * OPENBLAS_L2_SIZE unset, so a user's OPENBLAS_CORETYPE=Haswell cannot turn
 * the comparison into one with the AVX2 kernel), OPENBLAS_VERBOSE=0 and
 * OPENBLAS_BLOCK_FACTOR unset.  The candidate process calls it after its
 * sandbox replaced the environment and before it loads the kernel, so a
 * library's constructor sees them; the probe's child calls it too, so what
 * the probe records is what the timed calls run with.
 */
void avo_cpulib_thread_env(int threads);

/*
 * Probe the library described by `spec` (the job's "library" object:
 * "file" a soname or absolute path, "symbol", optional "describe" {key:
 * function name} of `const char *f(void)` functions, optional
 * "thread_count" an `int f(void)` function, optional "install" a hint) in a
 * child process with avo_cpulib_thread_env(threads), within timeout_s.
 * Returns 0 with *ret (caller owns) = {"library": file, "path": the file
 * loaded (symlinks resolved), "symbol", "threads": threads, "version"?,
 * "info": {key: string}, "threads_reported"?, "environment": {name: value
 * avo set}, "environment_unset": [names avo unset], "env_overridden"?:
 * {name: this process's value} for each of them this process's environment
 * had otherwise}; or AVO_ENOTFOUND (cannot be
 * loaded, symbol or describe function missing: the baseline is
 * unavailable), AVO_EINVAL (malformed spec), AVO_ECHILD/AVO_ETIMEOUT (the
 * probe crashed or hung) with a one-line reason in err that names the file
 * and, where given, the install hint.
 */
int avo_cpulib_probe(const json_t *spec, int threads, double timeout_s, json_t **ret, char *err,
                     size_t errlen);

#endif
