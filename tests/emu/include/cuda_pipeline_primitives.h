/*
 * cuda_pipeline_primitives.h for the CPU emulator (see avo_emu.h): cp.async
 * through the pipeline primitives, as host C++ (NVRTC compiles the program
 * with the toolkit's header first).
 *
 * __pipeline_memcpy_async(dst, src, size[, zfill]) queues a copy of `size`
 * bytes (4, 8 or 16; dst and src aligned to it, else the launch fails: a
 * bad size with a trap, a misaligned pointer with
 * CUDA_ERROR_MISALIGNED_ADDRESS), the last `zfill` of them zeros;
 * __pipeline_commit() closes the thread's current batch of copies, and
 * __pipeline_wait_prior(n) performs every copy of the batches older than the
 * n most recent ones.  A copy lands only then: a kernel that reads its
 * destination before waiting for it reads what was there before (on a GPU,
 * an unspecified mix), so a missing wait shows as a wrong result.  Copies a
 * thread never waited for never land.
 */
#ifndef AVO_EMU_CUDA_PIPELINE_PRIMITIVES_H
#define AVO_EMU_CUDA_PIPELINE_PRIMITIVES_H

#include <cstdint>
#include <cstring>
#include <vector>

namespace avo_emu_pipeline
{
struct copy {
    void *dst;
    const void *src;
    unsigned bytes, zfill;
    unsigned long long batch;
};
/* One queue per thread of the running block (threads run one at a time). */
struct queue {
    unsigned long long block_serial, committed;
    std::vector<copy> copies;
};
inline queue queues[1024];

static inline queue &mine(void)
{
    unsigned i = avo_emu_current->thread_idx.x +
                 avo_emu_current->block_dim.x *
                     (avo_emu_current->thread_idx.y +
                      avo_emu_current->block_dim.y * avo_emu_current->thread_idx.z);
    queue &q = queues[i & 1023];
    if (q.block_serial != avo_emu_current->block_serial) { /* another block's leftovers */
        q.block_serial = avo_emu_current->block_serial;
        q.committed = 0;
        q.copies.clear();
    }
    return q;
}
} // namespace avo_emu_pipeline

static inline void __pipeline_memcpy_async(void *dst_shared, const void *src_global,
                                           size_t size_and_align, size_t zfill = 0)
{
    char what[200];
    if ((size_and_align != 4 && size_and_align != 8 && size_and_align != 16) ||
        zfill > size_and_align) {
        snprintf(what, sizeof what,
                 "cp.async: __pipeline_memcpy_async of %zu bytes (zfill %zu): the size must be "
                 "4, 8 or 16 and zfill at most the size",
                 size_and_align, zfill);
        avo_emu_current->rt->trap(avo_emu_current, what);
    }
    if (((uintptr_t)dst_shared | (uintptr_t)src_global) & (size_and_align - 1)) {
        snprintf(what, sizeof what,
                 "cp.async: __pipeline_memcpy_async of %zu bytes from %p to %p: both must be "
                 "aligned to the size",
                 size_and_align, src_global, dst_shared);
        avo_emu_current->rt->misaligned(avo_emu_current, what);
    }
    avo_emu_pipeline::queue &q = avo_emu_pipeline::mine();
    q.copies.push_back(
        {dst_shared, src_global, (unsigned)size_and_align, (unsigned)zfill, q.committed});
}

static inline void __pipeline_commit(void)
{
    avo_emu_pipeline::mine().committed++;
}

static inline void __pipeline_wait_prior(size_t prior)
{
    avo_emu_pipeline::queue &q = avo_emu_pipeline::mine();
    size_t kept = 0;
    for (size_t i = 0; i < q.copies.size(); i++) {
        avo_emu_pipeline::copy &c = q.copies[i];
        if (c.batch + prior < q.committed) {
            unsigned n = c.bytes - c.zfill;
            memcpy(c.dst, c.src, n);
            memset((char *)c.dst + n, 0, c.zfill);
        } else {
            q.copies[kept++] = c;
        }
    }
    q.copies.resize(kept);
}

#endif
