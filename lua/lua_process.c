/*
 * lua_process.c — child processes for Lua (see lua_process.h).  Only the
 * experiment runner uses these; its children are avo itself, never
 * candidate code (which runs in sandboxed workers only).
 */
#include <errno.h>
#include <fcntl.h>
#include <lauxlib.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lua/lua_process.h"

#include "eval/supervise.h"

#define MAX_ARGS 64

/*
 * In the child after avo_supervise_fork (which asked for SIGTERM when the
 * parent dies): redirect, reset the signal state the parent changed (a
 * blocked mask and ignored signals survive exec), exec.  Never returns; 127
 * when exec fails.
 */
static void exec_child(char *const argv[], const char *log)
{
    int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
    int out = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (in < 0 || out < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0)
        _exit(127);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    for (int sig = 1; sig < NSIG; sig++)
        if (sig != SIGKILL && sig != SIGSTOP)
            signal(sig, SIG_DFL);
    execv(argv[0], argv);
    /* the log says why (this process is single-threaded: no lock is held) */
    dprintf(2, "avo: cannot execute %s: %s\n", argv[0], strerror(errno));
    _exit(127);
}

/* core.spawn(argv, log_path) -> pid | nil, message */
static int core_spawn(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    const char *log = luaL_checkstring(L, 2);
    lua_Integer n = luaL_len(L, 1);
    luaL_argcheck(L, n >= 1 && n < MAX_ARGS, 1, "expected 1 to 63 arguments");
    char *argv[MAX_ARGS];
    for (lua_Integer i = 1; i <= n; i++) {
        lua_geti(L, 1, i);
        argv[i - 1] = (char *)luaL_checkstring(L, -1); /* anchored in the table */
        lua_pop(L, 1);
    }
    argv[n] = NULL;
    pid_t pid = avo_supervise_fork(AVO_CHILD_TERM_WITH_PARENT);
    if (pid < 0) {
        lua_pushnil(L);
        lua_pushfstring(L, "cannot start %s: %s", argv[0], strerror(errno));
        return 2;
    }
    if (pid == 0)
        exec_child(argv, log);
    lua_pushinteger(L, pid);
    return 1;
}

/* core.reap(pid) -> nil (running) | exit status (128 + N: killed by signal N) */
static int core_reap(lua_State *L)
{
    pid_t pid = (pid_t)luaL_checkinteger(L, 1);
    int status;
    pid_t r;
    do
        r = waitpid(pid, &status, WNOHANG);
    while (r < 0 && errno == EINTR);
    if (r == 0)
        return 0;
    if (r < 0)
        return luaL_error(L, "waitpid %d: %s", (int)pid, strerror(errno));
    lua_pushinteger(L, WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
    return 1;
}

/* core.signal(pid, "TERM"|"KILL"|"INT") -> true | nil, message */
static int core_signal(lua_State *L)
{
    pid_t pid = (pid_t)luaL_checkinteger(L, 1);
    static const char *const names[] = {"TERM", "KILL", "INT", NULL};
    static const int numbers[] = {SIGTERM, SIGKILL, SIGINT};
    int which = luaL_checkoption(L, 2, "TERM", names);
    luaL_argcheck(L, pid > 0, 1, "expected a process id");
    if (kill(pid, numbers[which]) < 0) {
        lua_pushnil(L);
        lua_pushstring(L, strerror(errno));
        return 2;
    }
    lua_pushboolean(L, 1);
    return 1;
}

/* core.sleep(seconds): a signal cuts it short (the caller checks
 * core.interrupted()). */
static int core_sleep(lua_State *L)
{
    double s = luaL_checknumber(L, 1);
    if (s > 0) {
        struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
        nanosleep(&ts, NULL);
    }
    return 0;
}

/*
 * core.lock(path) -> true | nil, message
 * Take an exclusive advisory lock (flock) on path, created if missing, for
 * the life of this process: the kernel drops it when the process ends, even
 * by SIGKILL, so a stale lock never needs cleaning up.  The descriptor is
 * deliberately kept open (and close-on-exec).
 */
static int core_lock(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        lua_pushnil(L);
        lua_pushfstring(L, "cannot open %s: %s", path, strerror(errno));
        return 2;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
        int e = errno;
        close(fd);
        lua_pushnil(L);
        lua_pushstring(L, e == EWOULDBLOCK ? "held by another process" : strerror(e));
        return 2;
    }
    lua_pushboolean(L, 1);
    return 1;
}

void avo_lua_process_register(lua_State *L)
{
    static const luaL_Reg functions[] = {
        {"spawn", core_spawn}, {"reap", core_reap}, {"signal", core_signal},
        {"sleep", core_sleep},
        {"lock", core_lock}, {NULL, NULL},
    };
    luaL_setfuncs(L, functions, 0);
}
