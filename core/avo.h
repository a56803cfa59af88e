/*
 * avo.h — definitions shared by every core module: error codes and the
 * caller-owned error buffer convention.
 *
 * Every fallible core function returns 0 (or a positive count) on success and
 * a negative AVO_E* code on failure.  Functions that can fail for reasons a
 * user must read also take `char *err, size_t errlen`: on failure they write
 * one line (no trailing newline, no prefix) into that caller-owned buffer.
 * Library code never prints.
 */
#ifndef AVO_H
#define AVO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum {
    AVO_OK = 0,
    AVO_ENOMEM = -1,   /* allocation failed */
    AVO_EIO = -2,      /* read/write/pipe/file failure */
    AVO_EINVAL = -3,   /* bad argument or malformed input */
    AVO_ESQL = -4,     /* SQLite failure */
    AVO_ESCHEMA = -5,  /* archive written by a newer avo */
    AVO_ENOTFOUND = -6,/* no such row / file / symbol */
    AVO_ETIMEOUT = -7, /* deadline passed */
    AVO_ECHILD = -8,   /* a child process failed or died */
    AVO_EPROTO = -9,   /* malformed message between processes */
    AVO_EBUSY = -10,   /* held by another process (a live run, a locked file) */
};

#define AVO_ERRLEN 1024

/* Static English text for an AVO_E* code; never NULL. */
const char *avo_strerror(int code);

/* printf-style write into a caller-owned error buffer; tolerates err == NULL.
 * Always returns `code`, so callers can `return avo_error(err, len, AVO_EIO, ...)`. */
int avo_error(char *err, size_t errlen, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Wall-clock and monotonic seconds. */
double avo_now(void);
double avo_monotonic(void);

/* mkdir -p with mode 0755: every missing directory of `path` is created, an
 * existing one is fine.  Returns 0 or a negative errno (-ENAMETOOLONG when
 * path does not fit PATH_MAX). */
int avo_mkdir_p(const char *path);

/*
 * The absolute path of the running avo binary, from /proc/self/exe, or where
 * /proc is not mounted (a plain chroot) from the path the kernel executed
 * (AT_EXECFN) made absolute.  Computed on the first call, which main() makes
 * before anything can change the working directory; the string is static.
 * NULL when neither works.
 */
const char *avo_self_exe(void);

/*
 * Whole-buffer I/O on a file descriptor, across partial transfers and
 * interrupted calls (EINTR), for every pipe and file avo writes or reads.
 * avo_write_all returns 0 or a negative errno.  avo_read_all returns the
 * bytes read, fewer than len only at end of file, or a negative errno.
 */
int avo_write_all(int fd, const void *data, size_t len);
ssize_t avo_read_all(int fd, void *data, size_t len);

/* Create or truncate `path` (never through a symlink) with `mode` and write
 * data[0..len) to it.  0 or a negative errno. */
int avo_write_file(const char *path, const void *data, size_t len, mode_t mode);

/* The whole of the regular file open on `fd` (read from offset 0) if it is
 * at most `max` bytes, NUL-terminated; caller frees.  NULL with errno set
 * (EFBIG for a larger file or one that is not regular). */
char *avo_read_fd(int fd, size_t max, size_t *ret_len);

#endif
