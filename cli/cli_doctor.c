/*
 * cli_doctor.c — `avo doctor`: what this machine offers avo.  Reports NVRTC
 * (version, path, where it was found: $AVO_NVRTC, a toolkit or NVIDIA's pip
 * wheels; architectures), the folder of CUDA headers kernels may include,
 * the NVIDIA driver and each GPU (name, compute capability, SMs, memory, L2),
 * the host C compiler, the sandbox mechanism kernels run under (how root
 * enters it, the uids they run as, from the plan evaluations follow; what a
 * stronger one lacks), and each vendor baseline an evaluator may name
 * (available or why not, library version and path); for anything missing,
 * what to install.  It is a
 * report: the exit status is 0 whatever is missing (2 on a usage error).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/avo.h"
#include "eval/baseline.h"
#include "cli/cli.h"
#include "eval/cuda/cuda_api.h"
#include "eval/sandbox.h"
#include "eval/supervise.h"
#include "eval/cuda/vendor.h"

#define VERSION_TIMEOUT_S 30 /* a compiler that does not answer --version by then is broken */

/*
 * The first line `sh -c cmd` prints, into line (empty when it prints none
 * or cannot start), run as a supervised child: its own group, killed at
 * the deadline, always reaped.
 */
static void first_line_of(const char *cmd, char *line, size_t len)
{
    int out[2];
    line[0] = '\0';
    if (pipe2(out, O_CLOEXEC) < 0)
        return;
    pid_t pid = avo_supervise_fork(AVO_CHILD_OWN_GROUP);
    if (pid == 0) {
        if (dup2(out[1], 1) < 0)
            _exit(127);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    close(out[1]);
    if (pid < 0) {
        close(out[0]);
        return;
    }
    avo_tail tail = {.len = 0};
    fcntl(out[0], F_SETFL, O_NONBLOCK);
    avo_supervise_sink sink = {out[0], avo_tail_drain, &tail};
    avo_supervise_result res;
    avo_supervise_wait(pid, avo_monotonic() + VERSION_TIMEOUT_S, &sink, 1, &res);
    close(out[0]);
    const char *nl = memchr(tail.data, '\n', tail.len);
    size_t n = nl ? (size_t)(nl - tail.data) : tail.len;
    snprintf(line, len, "%.*s", (int)n, tail.data);
}

static void report_compiler(void)
{
    const char *cc = getenv("CC");
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s --version 2>/dev/null", cc && *cc ? cc : "cc");
    char line[256];
    first_line_of(cmd, line, sizeof line);
    if (line[0])
        printf("host compiler   %s\n", line);
    else
        printf("host compiler   MISSING: '%s' does not run; install gcc (Debian: build-essential) "
               "or set CC\n",
               cc && *cc ? cc : "cc");
}

/* The uids kernels and compilers run as, from the plan every evaluation
 * follows (avo_sandbox_uids). */
static void report_sandbox_uids(avo_sandbox_mechanism chosen)
{
    char err[AVO_ERRLEN];
    avo_sandbox_uid_plan plan;
    if (chosen == AVO_SANDBOX_NMECHANISMS)
        return;
    if (avo_sandbox_uids(&plan, err, sizeof err) < 0)
        printf("  uids          NONE: %s\n", err);
    else if (plan.count == 1)
        printf("  uids          %ld: %s\n", plan.base, plan.how);
    else
        printf("  uids          %ld..%ld (%ld): %s\n", plan.base, plan.base + plan.count - 1,
               plan.count, plan.how);
}

/* The mechanism avo_sandbox_enter takes here, and each one the machine
 * lacks with why and how to enable it. */
static void report_sandbox(void)
{
    char err[AVO_ERRLEN];
    avo_sandbox_mechanism chosen;
    const char *setting = getenv("AVO_SANDBOX");
    if (avo_sandbox_select(&chosen, err, sizeof err) < 0) {
        if (setting && *setting && strcmp(setting, "auto") != 0)
            printf("sandbox         NONE: %s\n", err);
        else
            printf("sandbox         NONE: kernels are refused here, nothing isolates their "
                   "filesystem; enable a mechanism below, or opt in with AVO_SANDBOX=unisolated\n");
        chosen = AVO_SANDBOX_NMECHANISMS;
    } else {
        printf("sandbox         %s (%s%s)\n", avo_sandbox_mechanism_name(chosen),
               setting && *setting ? "AVO_SANDBOX=" : "the strongest this machine allows",
               setting && *setting ? setting : "");
    }
    if (chosen == AVO_SANDBOX_NAMESPACES)
        printf("  how           %s\n", avo_sandbox_view_way());
    report_sandbox_uids(chosen);
    for (int m = 0; m < AVO_SANDBOX_UNISOLATED; m++) {
        const char *why = avo_sandbox_unavailable((avo_sandbox_mechanism)m);
        printf("  %-13s %s%s\n", avo_sandbox_mechanism_name((avo_sandbox_mechanism)m),
               why ? "MISSING: " : "available", why ? why : "");
        if (why)
            printf("                to enable: %s\n", avo_sandbox_remedy((avo_sandbox_mechanism)m));
    }
    if (chosen == AVO_SANDBOX_UNISOLATED && geteuid() == 0)
        printf("                WARNING: nothing isolates the kernels' filesystem: they read what "
               "their own unprivileged uid can read\n");
    else if (chosen == AVO_SANDBOX_UNISOLATED)
        printf("                WARNING: nothing isolates the kernels' filesystem: they read what "
               "you (uid %u) can read\n",
               (unsigned)geteuid());
}

static int report_nvrtc(void)
{
    char err[AVO_ERRLEN];
    const avo_nvrtc_api *nvrtc = avo_cuda_nvrtc(err, sizeof err);
    if (!nvrtc) {
        printf("NVRTC           MISSING: %s\n", err);
        return 0;
    }
    int major = 0, minor = 0, n = 0;
    nvrtc->Version(&major, &minor);
    printf("NVRTC           %d.%d (%s; from %s)\n", major, minor, nvrtc->path, nvrtc->source);
    if (nvrtc->GetNumSupportedArchs(&n) == 0 && n > 0 && n < 256) {
        int archs[256];
        if (nvrtc->GetSupportedArchs(archs) == 0) {
            printf("  targets       ");
            for (int i = 0; i < n; i++)
                printf("%ssm_%d", i ? " " : "", archs[i]);
            printf("\n");
        }
    }
    /* The CUDA headers kernels may include, found as a compile finds them. */
    char dir[1024];
    if (avo_cuda_include_dir(nvrtc, dir, sizeof dir, err, sizeof err) == 0)
        printf("  headers       %s (cuda_fp16.h, cuda_bf16.h, mma.h, cuda_pipeline.h)\n", dir);
    else
        printf("  headers       MISSING: %s\n", err);
    return 1;
}

static void report_driver(int have_nvrtc)
{
    char err[AVO_ERRLEN];
    const avo_driver_api *cu = avo_cuda_driver(err, sizeof err);
    if (!cu) {
        printf("driver          MISSING: %s\n", err);
        printf("                CUDA kernels cannot run here%s\n",
               have_nvrtc ? "; `avo eval --compile-only --arch sm_90a` still works" : "");
        return;
    }
    int version = 0, count = 0;
    cu->DriverGetVersion(&version);
    cu->DeviceGetCount(&count);
    printf("driver          CUDA %d.%d (%s)\n", version / 1000, version % 1000 / 10, cu->path);
    printf("GPUs            %d\n", count);
    for (int i = 0; i < count; i++) {
        CUdevice dev;
        if (cu->DeviceGet(&dev, i) != 0)
            continue;
        char name[256] = "?";
        cu->DeviceGetName(name, sizeof name, dev);
        int attr[5] = {0};
        const int which[5] = {AVO_CU_DEV_COMPUTE_CAPABILITY_MAJOR,
                              AVO_CU_DEV_COMPUTE_CAPABILITY_MINOR, AVO_CU_DEV_MULTIPROCESSOR_COUNT,
                              AVO_CU_DEV_L2_CACHE_SIZE,
                              AVO_CU_DEV_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN};
        for (int k = 0; k < 5; k++)
            cu->DeviceGetAttribute(&attr[k], which[k], dev);
        size_t mem = 0;
        cu->DeviceTotalMem(&mem, dev);
        printf("  [%d] %s: sm_%d%d, %d SMs, %.1f GiB, L2 %.1f MiB, shared memory per block up to "
               "%d KiB\n",
               i, name, attr[0], attr[1], attr[2], (double)mem / (1 << 30),
               (double)attr[3] / (1 << 20), attr[4] / 1024);
    }
    if (count == 0)
        printf("                no GPU visible (check CUDA_VISIBLE_DEVICES and nvidia-smi)\n");
}

/* One line per named baseline: its library's version and path, or why it
 * cannot run here.  Loading needs no GPU. */
static void report_baselines(void)
{
    for (const avo_baseline_info *b = avo_baseline_list(); b->name; b++) {
        char err[AVO_ERRLEN];
        avo_vendor_lib lib;
        if (avo_vendor_load(b, &lib, err, sizeof err) == 0)
            printf("baseline        %-11s %s %s (%s)\n", b->name, lib.library, lib.version,
                   lib.path);
        else
            printf("baseline        %-11s UNAVAILABLE: %s\n", b->name, err);
    }
}

int avo_cli_doctor(const avo_cli_command *cmd, int argc, char **argv)
{
    if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        fputs(cmd->usage, stdout);
        return 0;
    }
    if (argc > 1)
        return avo_cli_usage_error(cmd->usage, "unexpected argument '%s'", argv[1]);
    printf("avo doctor\n");
    report_compiler();
    report_sandbox();
    int have_nvrtc = report_nvrtc();
    report_driver(have_nvrtc);
    report_baselines();
    if (!have_nvrtc)
        printf("\nto compile CUDA kernels install NVRTC: NVIDIA's pip wheels "
               "(tools/install-deps --tests puts them in /opt/avo/cuda-wheels) or the CUDA "
               "toolkit (developer.nvidia.com/cuda-downloads; set CUDA_HOME if it is not in "
               "/usr/local/cuda), or name the library in AVO_NVRTC\n");
    return 0;
}
