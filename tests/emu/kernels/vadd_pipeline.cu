// out = x + y through a STAGES-deep cp.async pipeline (cuda_pipeline.h), for
// the emulator's tests (tests/emu/wmma.sh): each block walks tiles of
// 4 * BLOCK floats (tile t on block t % gridDim.x); each thread copies its
// float4 of x and of y into the tile's stage in 16 bytes (past the end of
// the arrays in 4-byte pieces, zero-filled), STAGES - 1 tiles ahead of the
// one it adds.  PLANT picks a mistake: 1 a copy of 12 bytes, 2 waiting for
// one batch too few (the tile read before it lands), 3 a 16-byte copy from a
// 4-byte aligned address.  Evaluator: tests/emu/evaluators/vadd_pipeline.lua
// (dynamic shared memory: STAGES * 2 * 16 * BLOCK bytes).
#include <cuda_pipeline.h>

// avo:param BLOCK 64 128
// avo:param STAGES 1 2 3 4
// avo:param PLANT 0 1 2 3

#ifndef STAGES
#define STAGES 2
#endif
#ifndef PLANT
#define PLANT 0
#endif

__device__ void issue(int n, const float *x, const float *y, float4 *stage, int tile)
{
    const int t = threadIdx.x, base = (tile * blockDim.x + t) * 4;
    float4 *sx = stage + 2 * t, *sy = sx + 1;
    if (base >= n)
        return;
    if (base + 4 <= n) {
        const float *px = x + base;
        if (PLANT == 3)
            px = x + base + 1; // traps before it reads
        __pipeline_memcpy_async(sx, px, PLANT == 1 ? 12 : 16);
        __pipeline_memcpy_async(sy, y + base, 16);
    } else {
        for (int j = 0; j < 4; j++) {
            int i = base + j < n ? base + j : n - 1;
            __pipeline_memcpy_async((float *)sx + j, x + i, 4, base + j < n ? 0 : 4);
            __pipeline_memcpy_async((float *)sy + j, y + i, 4, base + j < n ? 0 : 4);
        }
    }
}

extern "C" __global__ void vadd(int n, const float *x, const float *y, float *out)
{
    extern __shared__ float4 stages[]; // STAGES x blockDim.x x {x, y}
    const int per_tile = 4 * blockDim.x, tiles = (n + per_tile - 1) / per_tile;
    const int mine = (tiles - (int)blockIdx.x + (int)gridDim.x - 1) / (int)gridDim.x;
    for (int s = 0; s < STAGES - 1; s++) {
        if (s < mine)
            issue(n, x, y, stages + s * 2 * blockDim.x, blockIdx.x + s * gridDim.x);
        __pipeline_commit();
    }
    for (int k = 0; k < mine; k++) {
        int ahead = k + STAGES - 1;
        if (ahead < mine)
            issue(n, x, y, stages + (ahead % STAGES) * 2 * blockDim.x,
                  blockIdx.x + ahead * gridDim.x);
        __pipeline_commit();
        __pipeline_wait_prior(PLANT == 2 ? STAGES : STAGES - 1);
        const float4 *st = stages + (k % STAGES) * 2 * blockDim.x + 2 * threadIdx.x;
        int base = ((blockIdx.x + k * gridDim.x) * blockDim.x + threadIdx.x) * 4;
        for (int j = 0; j < 4 && base + j < n; j++)
            out[base + j] = ((const float *)&st[0])[j] + ((const float *)&st[1])[j];
    }
}
