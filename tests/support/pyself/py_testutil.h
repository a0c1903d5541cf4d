/*
 * py_testutil.h — helpers shared by tests/unit/test_py_*.c: finding the
 * CPython interpreters installed here at run time, running a fixture
 * under one of them with its stdout on a pipe, reading its lines with a
 * timeout, and stopping it.  Test code only (static functions).
 *
 * Interpreters: $TRC_TEST_PYTHONS (colon-separated) if set, else
 * /usr/bin/python3 and every pyenv VERSION/bin/python3 (pyenv's root as
 * tests/support/pyenv.h finds it), skipping 2.x, 3.6 and 3.7 by name.
 */
#ifndef TRC_LIB_PY_TESTUTIL_H
#define TRC_LIB_PY_TESTUTIL_H

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/support/pyenv.h"

#define PYT_MAX_PY 32

/* Checks made across every interpreter report each failure and go on;
 * the test asserts pyt_failures == 0 at the end. */
static int pyt_failures;

__attribute__((unused, format(printf, 2, 3))) static void pyt_failf(const char *py, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "FAIL [%s] ", py);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    pyt_failures++;
}

typedef struct pyt_list {
    char path[PYT_MAX_PY][PATH_MAX];
    int n;
} pyt_list;

__attribute__((unused)) static int pyt_old_dir(const char *path)
{
    const char *v = strstr(path, "/versions/");
    if (!v)
        return 0;
    v += 10;
    return v[0] == '2' || strncmp(v, "3.6", 3) == 0 || strncmp(v, "3.7", 3) == 0;
}

__attribute__((unused)) static void pyt_add(pyt_list *l, const char *path)
{
    char real[PATH_MAX];
    if (l->n >= PYT_MAX_PY || access(path, X_OK) != 0 || !realpath(path, real))
        return;
    for (int i = 0; i < l->n; i++) {
        char other[PATH_MAX];
        if (realpath(l->path[i], other) && strcmp(other, real) == 0)
            return;
    }
    snprintf(l->path[l->n++], PATH_MAX, "%s", path);
}

__attribute__((unused)) static void pyt_find(pyt_list *l)
{
    const char *env = getenv("TRC_TEST_PYTHONS");
    l->n = 0;
    if (env && *env) {
        char buf[8192];
        snprintf(buf, sizeof buf, "%s", env);
        for (char *s = strtok(buf, ":"); s; s = strtok(NULL, ":"))
            pyt_add(l, s);
        return;
    }
    pyt_add(l, "/usr/bin/python3");
    glob_t g;
    if (test_pyenv_glob("versions/*/bin/python3", 0, &g) == 0) {
        for (size_t i = 0; i < g.gl_pathc; i++)
            if (!pyt_old_dir(g.gl_pathv[i]))
                pyt_add(l, g.gl_pathv[i]);
        globfree(&g);
    }
}

/* Absolute path of a file in the repository (TRC_ROOT, else cwd). */
__attribute__((unused)) static void pyt_repo_path(char *out, size_t n, const char *rel)
{
    const char *root = getenv("TRC_ROOT");
    char cwd[PATH_MAX];
    if (!root || !*root)
        root = getcwd(cwd, sizeof cwd) ? cwd : ".";
    size_t k = strlen(root);
    if (k + strlen(rel) + 2 > n) {
        out[0] = '\0';
        return;
    }
    memcpy(out, root, k);
    out[k] = '/';
    memcpy(out + k + 1, rel, strlen(rel) + 1);
}

typedef struct pyt_child {
    pid_t pid;
    int out;          /* read end of its stdout */
    char buf[65536];
    size_t len;
} pyt_child;

/* Runs argv (argv[0] a path) with stdout on a pipe, stderr inherited.
 * 0 or -1. */
__attribute__((unused)) static int pyt_spawn(pyt_child *c, char *const argv[])
{
    int fd[2];
    memset(c, 0, sizeof *c);
    c->pid = -1;
    c->out = -1;
    if (pipe2(fd, O_CLOEXEC) != 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return -1;
    }
    if (pid == 0) {
        dup2(fd[1], 1);
        setenv("PYTHONDONTWRITEBYTECODE", "1", 1);
        execv(argv[0], argv);
        _exit(127);
    }
    close(fd[1]);
    c->pid = pid;
    c->out = fd[0];
    return 0;
}

/* Next line of the child's stdout (without '\n') into line; 0, or -1 on
 * EOF or after timeout_ms. */
__attribute__((unused)) static int pyt_line(pyt_child *c, char *line, size_t n, int timeout_ms)
{
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        char *nl = memchr(c->buf, '\n', c->len);
        if (nl) {
            size_t k = (size_t)(nl - c->buf);
            snprintf(line, n, "%.*s", (int)k, c->buf);
            memmove(c->buf, nl + 1, c->len - k - 1);
            c->len -= k + 1;
            return 0;
        }
        struct timespec t1;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        long el = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
        if (el >= timeout_ms || c->len == sizeof c->buf)
            return -1;
        struct pollfd p = { c->out, POLLIN, 0 };
        if (poll(&p, 1, (int)(timeout_ms - el)) <= 0)
            continue;
        ssize_t r = read(c->out, c->buf + c->len, sizeof c->buf - c->len);
        if (r <= 0)
            return -1;
        c->len += (size_t)r;
    }
}

/* Kills and reaps the child; returns its wait status.  Safe twice. */
__attribute__((unused)) static int pyt_stop(pyt_child *c)
{
    int st = 0;
    if (c->pid > 0) {
        kill(c->pid, SIGKILL);
        while (waitpid(c->pid, &st, 0) < 0 && errno == EINTR)
            ;
        c->pid = -1;
    }
    if (c->out >= 0)
        close(c->out);
    c->out = -1;
    return st;
}

/* Waits for the child to exit by itself (timeout_ms), reading and
 * keeping its output in c->buf.  Returns the wait status, or -1 on
 * timeout (the child is then killed). */
__attribute__((unused)) static int pyt_wait(pyt_child *c, int timeout_ms)
{
    for (int waited = 0; waited < timeout_ms; waited += 10) {
        struct pollfd p = { c->out, POLLIN, 0 };
        if (c->out >= 0 && poll(&p, 1, 10) > 0 && c->len < sizeof c->buf - 1) {
            ssize_t r = read(c->out, c->buf + c->len, sizeof c->buf - 1 - c->len);
            if (r > 0)
                c->len += (size_t)r;
            else {
                close(c->out);
                c->out = -1;
            }
        } else if (c->out < 0) {
            usleep(10000);
        }
        int st;
        if (waitpid(c->pid, &st, WNOHANG) == c->pid) {
            c->pid = -1;
            if (c->out >= 0) {
                ssize_t r;
                while (c->len < sizeof c->buf - 1 &&
                       (r = read(c->out, c->buf + c->len, sizeof c->buf - 1 - c->len)) > 0)
                    c->len += (size_t)r;
                close(c->out);
                c->out = -1;
            }
            c->buf[c->len] = '\0';
            return st;
        }
    }
    pyt_stop(c);
    return -1;
}

#endif
