#include "core/avo.h"

#include <errno.h>
#include <fcntl.h>
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

int avo_write_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        if (n == 0)
            return -EIO;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

ssize_t avo_read_all(int fd, void *data, size_t len)
{
    char *p = data;
    size_t got = 0;
    while (got < len) {
        ssize_t n = read(fd, p + got, len - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        if (n == 0)
            break;
        got += (size_t)n;
    }
    return (ssize_t)got;
}

int avo_write_file(const char *path, const void *data, size_t len, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
    if (fd < 0)
        return -errno;
    int rc = avo_write_all(fd, data, len);
    if (close(fd) < 0 && rc == 0)
        rc = -errno;
    return rc;
}

char *avo_read_fd(int fd, size_t max, size_t *ret_len)
{
    struct stat st;
    if (fstat(fd, &st) < 0)
        return NULL;
    if (!S_ISREG(st.st_mode) || (size_t)st.st_size > max) {
        errno = EFBIG;
        return NULL;
    }
    char *data = malloc((size_t)st.st_size + 1);
    if (!data)
        return NULL;
    if (pread(fd, data, (size_t)st.st_size, 0) != st.st_size) {
        free(data);
        errno = EIO;
        return NULL;
    }
    data[st.st_size] = '\0';
    *ret_len = (size_t)st.st_size;
    return data;
}
