/*
 * avo_emu_rt.h — the contract between the CPU emulator's driver
 * (tests/emu/libcuda_emu.cpp) and a kernel compiled for it on the host
 * (tests/emu/include/avo_emu.h, force-included by tests/emu/libnvrtc_emu.c).
 *
 * A kernel module is a shared object that exports the table
 * `avo_emu_kernels` (below) and the variable `avo_emu_current`, which the
 * driver points at the running CUDA thread's context before it switches to
 * that thread.
 */
#ifndef AVO_EMU_RT_H
#define AVO_EMU_RT_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct avo_emu_index {
    unsigned x, y, z;
} avo_emu_index;

struct avo_emu_ctx;

typedef struct avo_emu_rt {
    /* __syncthreads(): returns when every live thread of the block is there. */
    void (*sync_block)(struct avo_emu_ctx *self);
    /* Warp exchange: deposits `mine`, waits for the warp's other live lanes
     * and copies every lane's deposit into all[32].  Returns the mask of
     * lanes that took part. */
    unsigned (*warp_exchange)(struct avo_emu_ctx *self, unsigned long long mine,
                              unsigned long long *all);
    /* clock64(): a cycle-like counter that only grows. */
    long long (*clock)(void);
    /* __trap() and friends: ends the launch with a sticky error. */
    void (*trap)(struct avo_emu_ctx *self, const char *what);
    /* A misaligned access the hardware refuses (WMMA, cp.async): ends the
     * launch with CUDA_ERROR_MISALIGNED_ADDRESS. */
    void (*misaligned)(struct avo_emu_ctx *self, const char *what);
} avo_emu_rt;

typedef struct avo_emu_ctx {
    avo_emu_index thread_idx, block_idx, block_dim, grid_dim;
    unsigned lane, warp; /* of this thread in its block */
    void *dynamic_shared;
    const avo_emu_rt *rt;
    unsigned long long block_serial; /* differs for every block the driver runs */
    /* Set by each warp exchange this thread takes part in: the same for all
     * its lanes, different for every exchange of the launch. */
    unsigned long long exchange_serial;
} avo_emu_ctx;

/* The module's kernels, ended by {NULL, NULL}: the name the driver is asked
 * for (an extern "C" name or NVRTC's lowered name of a name expression) and
 * the entry that unpacks cuLaunchKernel's parameters into a call. */
typedef struct avo_emu_kernel {
    const char *name;
    void (*entry)(void **params);
} avo_emu_kernel;

#ifdef __cplusplus
}
#endif
#endif
