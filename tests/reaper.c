/*
 * tests/reaper — runs one test as the reaper of everything it leaves.
 *
 *   reaper COMMAND [ARG...]
 *
 * Every test runs under it (tests/meson.build: the default test setup's
 * wrapper).  It makes itself the child subreaper, so the processes a test
 * orphans are reparented to it instead of to PID 1, and reaps them as they
 * end: where PID 1 does not reap (`meson test` itself is PID 1 in a
 * container started without an init, as `podman run image bash -c
 * "command 2"` makes it), orphans would stay zombies for the whole suite,
 * counting against the process limits of their uid (RLIMIT_NPROC counts
 * zombies) and the container's pids limit until forks fail.  When the test
 * ends, what it left running is killed and reaped, and the reaper ends as
 * the test did: its exit status, or the signal that killed it.  SIGTERM,
 * SIGINT and SIGHUP are passed on to the test.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t test_pid;

static void pass_on(int sig)
{
    if (test_pid > 0)
        kill(test_pid, sig);
}

/* SIGKILL to every process whose parent is this one; how many. */
static int kill_children(void)
{
    DIR *proc = opendir("/proc");
    if (!proc)
        return 0;
    int n = 0;
    pid_t self = getpid();
    struct dirent *d;
    while ((d = readdir(proc))) {
        if (d->d_name[0] < '1' || d->d_name[0] > '9')
            continue;
        char path[288], stat[512];
        snprintf(path, sizeof path, "/proc/%s/stat", d->d_name);
        FILE *f = fopen(path, "re");
        if (!f)
            continue;
        size_t len = fread(stat, 1, sizeof stat - 1, f);
        fclose(f);
        stat[len] = '\0';
        /* pid (comm) state ppid ...: comm may hold anything, so after its last ')' */
        const char *close_paren = strrchr(stat, ')');
        char state;
        int ppid;
        if (close_paren && sscanf(close_paren + 1, " %c %d", &state, &ppid) == 2 &&
            ppid == self && state != 'Z') {
            kill((pid_t)atoi(d->d_name), SIGKILL);
            n++;
        }
    }
    closedir(proc);
    return n;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: reaper COMMAND [ARG...]\n");
        return 2;
    }
    if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
        perror("reaper: PR_SET_CHILD_SUBREAPER (orphans go to PID 1)");
    struct sigaction sa = {.sa_handler = pass_on};
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    pid_t pid = fork();
    if (pid < 0) {
        perror("reaper: fork");
        return 127;
    }
    if (pid == 0) {
        signal(SIGTERM, SIG_DFL);
        signal(SIGINT, SIG_DFL);
        signal(SIGHUP, SIG_DFL);
        execvp(argv[1], argv + 1);
        fprintf(stderr, "reaper: cannot run %s: %s\n", argv[1], strerror(errno));
        _exit(127);
    }
    test_pid = pid;
    int status = 0;
    for (;;) { /* the test and every orphan that ends meanwhile */
        int st;
        pid_t got = waitpid(-1, &st, 0);
        if (got == pid) {
            status = st;
            break;
        }
        if (got < 0 && errno != EINTR)
            break;
    }
    test_pid = 0;
    /* What the test left running: killed, and reaped (their own children
     * come to us as they die), for ten seconds at most. */
    for (int round = 0; round < 1000; round++) {
        kill_children();
        while (waitpid(-1, NULL, WNOHANG) > 0) {
        }
        if (waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD)
            break;
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    }
    if (WIFSIGNALED(status)) {
        signal(WTERMSIG(status), SIG_DFL);
        kill(getpid(), WTERMSIG(status));
        return 128 + WTERMSIG(status);
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
