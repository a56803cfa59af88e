#include "avo.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

const char *avo_strerror(int code)
{
    switch (code) {
    case AVO_OK: return "success";
    case AVO_ENOMEM: return "out of memory";
    case AVO_EIO: return "input/output error";
    case AVO_EINVAL: return "invalid argument";
    case AVO_ESQL: return "database error";
    case AVO_ESCHEMA: return "archive schema is newer than this avo";
    case AVO_ENOTFOUND: return "not found";
    case AVO_ETIMEOUT: return "timed out";
    case AVO_ECHILD: return "child process failed";
    case AVO_EPROTO: return "malformed message";
    case AVO_EBUSY: return "held by another process";
    default: return "unknown error";
    }
}

int avo_error(char *err, size_t errlen, int code, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return code;
}

double avo_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double avo_monotonic(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int avo_mkdir_p(const char *path)
{
    char buf[PATH_MAX];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
        return -ENAMETOOLONG;
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0755) < 0 && errno != EEXIST)
            return -errno;
        *p = '/';
    }
    if (mkdir(buf, 0755) < 0 && errno != EEXIST)
        return -errno;
    return 0;
}

const char *avo_self_exe(void)
{
    static char path[PATH_MAX];
    static int done;
    if (!done) {
        done = 1;
        ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
        if (n > 0) {
            path[n] = '\0';
        } else {
            const char *run = (const char *)getauxval(AT_EXECFN);
            if (!run || !realpath(run, path))
                path[0] = '\0';
        }
    }
    return path[0] ? path : NULL;
}
