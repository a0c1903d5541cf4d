/*
 * test_py_names.c — py_proc_thread_name (lib/py/py_names.c) against a
 * live fixture (fixtures/workloads/py_names.py) under every CPython
 * found at run time (tests/support/pyself/py_testutil.h).  For each one: the
 * name of every thread by native tid equals what threading reported
 * inside that thread (MainThread, Dummy-N, a default Thread-N, ASCII,
 * UCS-2 and UCS-4 names; plain, many-attribute and materialized-dict
 * Thread objects), for exactly the threads py_proc_threads lists; a
 * repeated call is served from the cache without reading; a tid that is
 * not a thread of the target gets NULL; a rename at run time shows
 * within the refresh interval; while threads start and end all the time
 * a name is right or NULL, never another thread's; after the target
 * exits no crash.  Every allocation of a first scan made to fail in
 * turn: NULL or the right name, and the next scan recovers.  With
 * threading never imported (-S, "bare"): NULL.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "lib/py/pyproc.h"
#include "tests/support/pyself/py_testutil.h"
#include "lib/util/alloc.h"

#define FIXTURE "fixtures/workloads/py_names.py"
#define MAX_T 32
#define LINE_MS 30000

typedef struct tname {
    int64_t tid;
    char name[256];
} tname;

static char fixture[PATH_MAX];

static int64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* "T tid name" lines until READY; other lines (BARE ...) into extra. */
static int read_threads(pyt_child *c, tname *t, int *n, char *extra, size_t extralen)
{
    char line[1024];
    *n = 0;
    if (extra)
        extra[0] = '\0';
    while (pyt_line(c, line, sizeof line, LINE_MS) == 0) {
        if (strcmp(line, "READY") == 0)
            return 0;
        long long tid;
        int pos = 0;
        if (sscanf(line, "T %lld %n", &tid, &pos) == 1 && pos > 0 && *n < MAX_T) {
            t[*n].tid = tid;
            size_t len = strnlen(line + pos, sizeof t[*n].name - 1);
            memcpy(t[*n].name, line + pos, len);
            t[*n].name[len] = '\0';
            (*n)++;
        } else if (extra) {
            snprintf(extra, extralen, "%.*s", (int)(extralen - 1), line);
        }
    }
    return -1;
}

static py_proc *attach(const char *py, pid_t pid)
{
    char err[512];
    py_proc *p = NULL;
    for (int i = 0; i < 200; i++) {
        py_status st = py_proc_attach(pid, &p, err, sizeof err);
        if (st == PY_OK)
            return p;
        if (st != PY_ERR_NOT_READY)
            break;
        usleep(10000);
    }
    pyt_failf(py, "attach: %s", err);
    return NULL;
}

static const char *expected_for(const tname *t, int n, int64_t tid)
{
    for (int i = 0; i < n; i++)
        if (t[i].tid == tid)
            return t[i].name;
    return NULL;
}

/* Every listed thread and every Python thread state named as expected. */
static void check_all(const char *py, py_proc *p, const tname *t, int n)
{
    for (int i = 0; i < n; i++) {
        const char *got = py_proc_thread_name(p, t[i].tid);
        if (!got || strcmp(got, t[i].name) != 0)
            pyt_failf(py, "tid %lld: name %s%s%s, expected \"%s\"", (long long)t[i].tid,
                  got ? "\"" : "", got ? got : "NULL", got ? "\"" : "", t[i].name);
    }
    py_thread_info ti[64];
    int k = py_proc_threads(p, ti, 64, 0);
    if (k != n)
        pyt_failf(py, "py_proc_threads lists %d threads, the fixture %d", k, n);
    for (int i = 0; i < k; i++) {
        const char *want = expected_for(t, n, ti[i].tid);
        const char *got = py_proc_thread_name(p, ti[i].tid);
        if (!want || !got || strcmp(want, got) != 0)
            pyt_failf(py, "thread state %d (tid %lld): name %s, expected %s", i,
                  (long long)ti[i].tid, got ? got : "NULL", want ? want : "(not a fixture thread)");
    }
}

/* A second call within the cache's lifetime reads nothing. */
static void check_cached(const char *py, py_proc *p, const tname *t)
{
    py_proc_stats a, b;
    py_proc_thread_name(p, t->tid);
    int64_t t0 = now_ms();
    py_proc_get_stats(p, &a);
    const char *got = py_proc_thread_name(p, t->tid);
    py_proc_get_stats(p, &b);
    if (now_ms() - t0 < 200 && b.reads != a.reads)
        pyt_failf(py, "a cached name cost %llu reads", (unsigned long long)(b.reads - a.reads));
    if (!got || strcmp(got, t->name) != 0)
        pyt_failf(py, "cached name of tid %lld wrong", (long long)t->tid);
}

static void check_rename(const char *py, pyt_child *c, py_proc *p, tname *t, int n)
{
    char line[1024] = "";
    long long tid;
    int pos = 0;

    kill(c->pid, SIGUSR1);
    if (pyt_line(c, line, sizeof line, LINE_MS) != 0 ||
        sscanf(line, "RENAMED %lld %n", &tid, &pos) != 1 || pos == 0) {
        pyt_failf(py, "no RENAMED line from the fixture (got \"%.80s\")", line);
        return;
    }
    const char *newname = line + pos;
    const char *old = expected_for(t, n, tid);
    if (!old || strcmp(old, "io-loop") != 0) {
        pyt_failf(py, "renamed tid %lld is not io-loop", tid);
        return;
    }
    /* the cache is refreshed within 0.5 s: allow a loaded machine 5 s */
    const char *got = NULL;
    int64_t t0 = now_ms();
    while (now_ms() - t0 < 5000) {
        got = py_proc_thread_name(p, tid);
        if (got && strcmp(got, newname) == 0)
            break;
        if (!got || strcmp(got, "io-loop") != 0) {
            pyt_failf(py, "during the rename tid %lld is named %s", tid, got ? got : "NULL");
            return;
        }
        usleep(20000);
    }
    if (!got || strcmp(got, newname) != 0)
        pyt_failf(py, "rename of tid %lld to \"%s\" not seen (still %s)", tid, newname, got ? got : "NULL");
    for (int i = 0; i < n; i++)
        if (t[i].tid == tid)
            snprintf(t[i].name, sizeof t[i].name, "%.*s", (int)sizeof t[i].name - 1, newname);
}

/* While _active changes all the time: right or NULL, never wrong. */
static void check_churn(const char *py, pyt_child *c, py_proc *p, const tname *t, int n)
{
    char line[256];
    int right = 0, null = 0;

    kill(c->pid, SIGUSR2);
    if (pyt_line(c, line, sizeof line, LINE_MS) != 0 || strcmp(line, "CHURNING") != 0) {
        pyt_failf(py, "no CHURNING line from the fixture");
        return;
    }
    int64_t t0 = now_ms();
    while (now_ms() - t0 < 1500) {
        /* a tid that is no thread of the target: a fresh scan at each call */
        if (py_proc_thread_name(p, (int64_t)getpid()) != NULL)
            pyt_failf(py, "the test's own pid got a name");
        for (int i = 0; i < n; i++) {
            const char *got = py_proc_thread_name(p, t[i].tid);
            if (!got)
                null++;
            else if (strcmp(got, t[i].name) == 0)
                right++;
            else
                pyt_failf(py, "churning: tid %lld named \"%s\", expected \"%s\"", (long long)t[i].tid,
                      got, t[i].name);
        }
        usleep(5000);
    }
    if (right == 0)
        pyt_failf(py, "churning: no name read at all (%d NULL)", null);
}

/* The n-th allocation of a fresh handle's first scan fails, for every n
 * up to the number a scan makes: no crash or leak, NULL or the right
 * name, and the next scan (an unknown tid rescans soon after) works. */
static void check_nomem(const char *py, pid_t pid, const tname *t)
{
    for (long n = 1; n < 5000; n++) {
        py_proc *p = attach(py, pid);
        if (!p)
            return;
        trc_alloc_fail_after(n);
        const char *got = py_proc_thread_name(p, t->tid);
        long used = trc_alloc_count();
        trc_alloc_fail_after(-1);
        if (got && strcmp(got, t->name) != 0)
            pyt_failf(py, "allocation %ld failing: name \"%s\", expected \"%s\"", n, got, t->name);
        if (used < n) {
            if (!got)
                pyt_failf(py, "no allocation failed (%ld made), yet NULL", used);
            fprintf(stderr, "note [%s]: each of the %ld allocations of a scan failed in turn\n",
                    py, used);
            py_proc_free(p);
            return;
        }
        usleep(25000);
        got = py_proc_thread_name(p, t->tid);
        if (!got || strcmp(got, t->name) != 0)
            pyt_failf(py, "after allocation %ld failed: name %s, expected \"%s\"", n,
                  got ? got : "NULL", t->name);
        py_proc_free(p);
    }
    pyt_failf(py, "a scan makes more than 5000 allocations");
}

static void run_one(const char *py)
{
    tname t[MAX_T];
    int n = 0;
    pyt_child c;
    char *argv[] = { (char *)py, fixture, NULL };

    if (pyt_spawn(&c, argv) != 0) {
        pyt_failf(py, "cannot start the fixture");
        return;
    }
    if (read_threads(&c, t, &n, NULL, 0) != 0 || n != 9) {
        pyt_failf(py, "fixture did not report its 9 threads (%d)", n);
        pyt_stop(&c);
        return;
    }
    py_proc *p = attach(py, c.pid);
    if (p) {
        check_all(py, p, t, n);
        check_cached(py, p, &t[0]);
        for (int i = 0; i < n; i++)
            if (strcmp(t[i].name, "MainThread") == 0)
                check_nomem(py, c.pid, &t[i]);
        if (py_proc_thread_name(p, (int64_t)getpid()) != NULL)
            pyt_failf(py, "a tid outside the target got a name");
        if (py_proc_thread_name(p, -1) != NULL || py_proc_thread_name(p, 0) != NULL)
            pyt_failf(py, "tid -1 / 0 got a name");
        check_rename(py, &c, p, t, n);
        check_all(py, p, t, n);
        check_churn(py, &c, p, t, n);
    }
    pyt_stop(&c);
    if (p) {
        /* gone: whatever is cached, or NULL; no crash */
        usleep(30000);
        (void)py_proc_thread_name(p, t[0].tid);
        (void)py_proc_thread_name(p, (int64_t)getpid());
        py_proc_free(p);
    }
}

static void run_bare(const char *py)
{
    tname t[MAX_T];
    int n = 0;
    pyt_child c;
    char extra[256];
    char *argv[] = { (char *)py, "-S", fixture, "bare", NULL };

    if (pyt_spawn(&c, argv) != 0) {
        pyt_failf(py, "cannot start the bare fixture");
        return;
    }
    if (read_threads(&c, t, &n, extra, sizeof extra) != 0 || n != 1) {
        pyt_failf(py, "bare fixture did not report its thread");
        pyt_stop(&c);
        return;
    }
    py_proc *p = attach(py, c.pid);
    if (p) {
        const char *got = py_proc_thread_name(p, t[0].tid);
        if (strcmp(extra, "BARE 0") == 0 && got)
            pyt_failf(py, "threading not imported, yet the main thread is named \"%s\"", got);
        if (strcmp(extra, "BARE 0") != 0)
            fprintf(stderr, "note [%s]: threading imported at start-up: not checked\n", py);
        py_proc_free(p);
    }
    pyt_stop(&c);
}

static void test_names_every_python(void **state)
{
    (void)state;
    pyt_list l;
    pyt_find(&l);
    pyt_repo_path(fixture, sizeof fixture, FIXTURE);
    if (l.n == 0 || access(fixture, R_OK) != 0) {
        fprintf(stderr, "no CPython or no fixture: skipped\n");
        skip();
    }
    for (int i = 0; i < l.n; i++) {
        int before = pyt_failures;
        run_one(l.path[i]);
        run_bare(l.path[i]);
        fprintf(stderr, "%s [%s]\n", pyt_failures == before ? "ok  " : "FAIL", l.path[i]);
    }
    assert_int_equal(pyt_failures, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names_every_python),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
