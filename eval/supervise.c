/*
 * supervise.c — deadlines, draining and reaping of child processes (see
 * supervise.h).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/avo.h"
#include "eval/supervise.h"

#define POLL_SLICE_MS 100 /* longest sleep between checks on a child */
#define MAX_SINKS 4

void avo_tail_append(avo_tail *t, const char *p, size_t n)
{
    if (n > AVO_TAIL_MAX) {
        p += n - AVO_TAIL_MAX;
        n = AVO_TAIL_MAX;
    }
    if (t->len + n > AVO_TAIL_MAX) {
        size_t drop = t->len + n - AVO_TAIL_MAX;
        memmove(t->data, t->data + drop, t->len - drop);
        t->len -= drop;
    }
    memcpy(t->data + t->len, p, n);
    t->len += n;
}

int avo_tail_drain(int fd, void *ctx)
{
    avo_tail *t = ctx;
    char chunk[4096];
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : 1;
        if (n == 0)
            return 1;
        avo_tail_append(t, chunk, (size_t)n);
    }
}

/*
 * Milliseconds for the next poll(): a full slice while pipes are open (they
 * wake us), and once all are closed a pause that starts at 1 ms and doubles,
 * since the child is most likely exiting.  Never past the deadline.
 */
static int wait_slice_ms(double left, int pipes_open, int *idle_ms)
{
    int ms = POLL_SLICE_MS;
    if (!pipes_open) {
        ms = *idle_ms;
        *idle_ms = ms * 2 > POLL_SLICE_MS ? POLL_SLICE_MS : ms * 2;
    }
    int left_ms = (int)(left * 1000) + 1;
    return ms < left_ms ? ms : left_ms;
}

void avo_supervise_wait(pid_t pid, double deadline, avo_supervise_sink *sinks, size_t n,
                        avo_supervise_result *ret)
{
    memset(ret, 0, sizeof *ret);
    int open[MAX_SINKS] = {0}, reaped = 0, idle_ms = 1;
    if (n > MAX_SINKS)
        n = MAX_SINKS;
    for (size_t i = 0; i < n; i++)
        open[i] = sinks[i].fd >= 0;
    /* Until the child is reaped: it may close its pipes and go on running,
     * and a descendant may hold them open after it exits. */
    while (!reaped) {
        double left = deadline - avo_monotonic();
        if (left <= 0) {
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL);
            ret->timed_out = 1;
            break;
        }
        struct pollfd p[MAX_SINKS];
        int any_open = 0;
        for (size_t i = 0; i < n; i++) {
            p[i] = (struct pollfd){.fd = open[i] ? sinks[i].fd : -1, .events = POLLIN};
            any_open |= open[i];
        }
        poll(p, n, wait_slice_ms(left, any_open, &idle_ms)); /* the deadline bounds errors */
        for (size_t i = 0; i < n; i++)
            if (open[i] && sinks[i].drain(sinks[i].fd, sinks[i].ctx))
                open[i] = 0;
        reaped = wait4(pid, &ret->status, WNOHANG, &ret->usage) == pid;
    }
    if (!reaped)
        while (wait4(pid, &ret->status, 0, &ret->usage) < 0 && errno == EINTR)
            ;
    for (size_t i = 0; i < n; i++)
        if (open[i])
            sinks[i].drain(sinks[i].fd, sinks[i].ctx);
    kill(-pid, SIGKILL); /* leftovers of the group, if any */
}

static const struct {
    int sig;
    const char *name;
} signal_names[] = {
    {SIGSEGV, "SIGSEGV"}, {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},   {SIGILL, "SIGILL"},
    {SIGABRT, "SIGABRT"}, {SIGKILL, "SIGKILL"}, {SIGTERM, "SIGTERM"}, {SIGXCPU, "SIGXCPU"},
    {SIGXFSZ, "SIGXFSZ"}, {SIGSYS, "SIGSYS"},   {SIGTRAP, "SIGTRAP"}, {SIGPIPE, "SIGPIPE"},
    {SIGINT, "SIGINT"},   {SIGHUP, "SIGHUP"},   {SIGALRM, "SIGALRM"},
};

void avo_supervise_signal_name(int sig, char *buf, size_t len)
{
    const char *text = strsignal(sig);
    for (size_t i = 0; i < sizeof signal_names / sizeof signal_names[0]; i++)
        if (signal_names[i].sig == sig) {
            snprintf(buf, len, "%s (%s)", signal_names[i].name, text ? text : "unknown");
            return;
        }
    snprintf(buf, len, "signal %d (%s)", sig, text ? text : "unknown");
}

int avo_supervise_death(int status, char *buf, size_t len)
{
    if (WIFSIGNALED(status)) {
        avo_supervise_signal_name(WTERMSIG(status), buf, len);
        return WTERMSIG(status);
    }
    snprintf(buf, len, "status %d", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return 0;
}

pid_t avo_supervise_fork(int flags)
{
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid > 0 && (flags & AVO_CHILD_OWN_GROUP))
        setpgid(pid, pid);
    if (pid != 0)
        return pid;
    if (flags & AVO_CHILD_OWN_GROUP)
        setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, (flags & AVO_CHILD_TERM_WITH_PARENT) ? SIGTERM : SIGKILL);
    if (getppid() != parent)
        _exit(127);
    if (flags & AVO_CHILD_CRASH_DEFAULT) {
        static const int crash[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP};
        for (size_t i = 0; i < sizeof crash / sizeof crash[0]; i++)
            signal(crash[i], SIG_DFL);
    }
    return 0;
}

/* Room for one descriptor's control message, aligned for cmsghdr. */
typedef union fd_control {
    char buf[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
} fd_control;

ssize_t avo_supervise_send_fd(int sock, const void *buf, size_t len, int fd)
{
    struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
    fd_control control;
    if (fd >= 0) {
        memset(&control, 0, sizeof control);
        msg.msg_control = control.buf;
        msg.msg_controllen = sizeof control.buf;
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof fd);
    }
    ssize_t n;
    while ((n = sendmsg(sock, &msg, MSG_NOSIGNAL)) < 0 && errno == EINTR)
        ;
    return n;
}

ssize_t avo_supervise_recv_fd(int sock, void *buf, size_t len, int *ret_fd)
{
    struct iovec iov = {.iov_base = buf, .iov_len = len};
    fd_control control;
    struct msghdr msg = {.msg_iov = &iov,
                         .msg_iovlen = 1,
                         .msg_control = control.buf,
                         .msg_controllen = sizeof control.buf};
    *ret_fd = -1;
    ssize_t n;
    while ((n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
        ;
    struct cmsghdr *c = n >= 0 ? CMSG_FIRSTHDR(&msg) : NULL;
    if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
        c->cmsg_len == CMSG_LEN(sizeof(int)))
        memcpy(ret_fd, CMSG_DATA(c), sizeof *ret_fd);
    return n;
}
