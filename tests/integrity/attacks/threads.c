/*
 * ATTACK threads — use more cores than the workload allows. The evaluator
 * describes a single-threaded kernel and the runner does not enforce it
 * (eval/cpu/cpu.c: the seccomp filter allows clone with CLONE_THREAD), so a
 * kernel splitting its rows over threads looks faster per call than any
 * single-threaded one. To make the outcome unambiguous this kernel writes
 * nothing when it cannot start its threads.
 * Stopped by: threads = 1 enforced unless the evaluator allows threads
 * (and then recorded) (issue 10, item 2).
 * integrity: expect=fail
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#define THREADS 4

struct part {
    int32_t m0, m1, N, K;
    const float *A, *B;
    float *C;
};

static void *rows(void *arg)
{
    struct part *p = arg;
    for (int32_t i = p->m0; i < p->m1; i++) {
        memset(p->C + (int64_t)i * p->N, 0, sizeof(float) * (size_t)p->N);
        for (int32_t k = 0; k < p->K; k++) {
            float a = p->A[(int64_t)i * p->K + k];
            for (int32_t j = 0; j < p->N; j++)
                p->C[(int64_t)i * p->N + j] += a * p->B[(int64_t)k * p->N + j];
        }
    }
    return NULL;
}

void mm(int32_t M, int32_t N, int32_t K, const float *A, const float *B, float *C)
{
    pthread_t tid[THREADS];
    struct part parts[THREADS];
    int started = 0;
    for (int t = 0; t < THREADS; t++) {
        parts[t] = (struct part){M * t / THREADS, M * (t + 1) / THREADS, N, K, A, B, C};
        if (pthread_create(&tid[t], NULL, rows, &parts[t]) != 0)
            break;
        started++;
    }
    for (int t = 0; t < started; t++)
        pthread_join(tid[t], NULL);
    /* fewer threads than asked: leave the rest unwritten */
}
