/*
 * test_py_threads.c — py_proc_threads against a live fixture
 * (fixtures/workloads/py_thread_cues.py) under every CPython found at
 * run time: threads started and ended at the head, middle and tail of
 * the interpreter's list must show (or be gone) in the very first call
 * after the change, also when that call reads the known list from the
 * thread states alone (lib/py/py_threads.c "steady" reads); and such
 * reads must be what an unchanged list gets.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "lib/py/pyproc.h"
#include "tests/support/pyself/py_testutil.h"

#define FIXTURE "fixtures/workloads/py_thread_cues.py"
#define MAX_T 16


static int cmp_tid(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* The sorted native ids py_proc_threads gives; -1 on failure. */
static int list_tids(py_proc *p, long *out, int want_gil)
{
    py_thread_info th[MAX_T];
    int n = py_proc_threads(p, th, MAX_T, want_gil);
    for (int i = 0; i < n; i++)
        out[i] = (long)th[i].tid;
    if (n > 0)
        qsort(out, (size_t)n, sizeof *out, cmp_tid);
    return n;
}

/* "step K TID ..." -> sorted tids; their count, or -1. */
static int parse_step(const char *line, int *k, long *out)
{
    const char *s = line;
    int used, n = 0;
    if (sscanf(s, "step %d%n", k, &used) != 1)
        return -1;
    s += used;
    long t;
    while (n < MAX_T && sscanf(s, "%ld%n", &t, &used) == 1) {
        out[n++] = t;
        s += used;
    }
    qsort(out, (size_t)n, sizeof *out, cmp_tid);
    return n;
}

static int same(const long *a, int na, const long *b, int nb)
{
    return na == nb && memcmp(a, b, (size_t)na * sizeof *a) == 0;
}

/* "[1 2 3]" */
static const char *show(const long *t, int n, char *buf, size_t cap)
{
    size_t k = (size_t)snprintf(buf, cap, "[");
    for (int i = 0; i < n && k < cap; i++)
        k += (size_t)snprintf(buf + k, cap - k, i ? " %ld" : "%ld", t[i]);
    if (k < cap)
        snprintf(buf + k, cap - k, "]");
    return buf;
}

/* Calls back to back while nothing changes: every one must be answered
 * from the known list, with the fixture's threads. */
static void check_steady(const char *py, py_proc *p, const long *want, int nwant, int k)
{
    py_proc_stats s0, s1;
    long got[MAX_T];

    py_proc_get_stats(p, &s0);
    for (int i = 0; i < 20; i++) {
        int n = list_tids(p, got, 0);
        if (!same(got, n, want, nwant)) {
            char a[256], b[256];
            pyt_failf(py, "after step %d, steady call %d: tids %s, the fixture's %s", k, i,
                  show(got, n, a, sizeof a), show(want, nwant, b, sizeof b));
            return;
        }
    }
    py_proc_get_stats(p, &s1);
    if (s1.thread_lists_steady - s0.thread_lists_steady != 20 || s1.thread_lists_full != s0.thread_lists_full)
        pyt_failf(py, "after step %d: %llu of 20 unchanged lists read from the thread states, %llu in full", k,
              (unsigned long long)(s1.thread_lists_steady - s0.thread_lists_steady),
              (unsigned long long)(s1.thread_lists_full - s0.thread_lists_full));
}

static void check_interpreter(const char *py, const char *fixture)
{
    pyt_child c;
    char *argv[] = { (char *)py, (char *)fixture, NULL };
    char line[1024], err[512];
    py_proc *p = NULL;
    long want[MAX_T], got[MAX_T];
    int nwant = 1, k = 0, changes = 0;

    if (pyt_spawn(&c, argv) != 0 || pyt_line(&c, line, sizeof line, 60000) != 0 ||
        strcmp(line, "ready") != 0) {
        pyt_failf(py, "fixture did not become ready");
        goto out;
    }
    py_status st = py_proc_attach(c.pid, &p, err, sizeof err);
    if (st != PY_OK) {
        pyt_failf(py, "attach: %s", err);
        goto out;
    }
    /* Only a change may send a call back to the runtime: no refresh. */
    py_proc_set_list_refresh(p, UINT64_MAX / 2);
    want[0] = c.pid;
    if (list_tids(p, got, 0) != 1 || got[0] != c.pid)
        pyt_failf(py, "at start: not the main thread alone");
    check_steady(py, p, want, nwant, 0);
    for (;;) {
        kill(c.pid, SIGUSR1);
        if (pyt_line(&c, line, sizeof line, 30000) != 0) {
            pyt_failf(py, "no answer to cue %d", k + 1);
            goto out;
        }
        if (strcmp(line, "done") == 0)
            break;
        int step;
        nwant = parse_step(line, &step, want);
        if (nwant < 1 || step != k + 1) {
            pyt_failf(py, "bad line \"%s\"", line);
            goto out;
        }
        k = step;
        py_proc_stats s0, s1;
        py_proc_get_stats(p, &s0);
        int n = list_tids(p, got, 0);
        py_proc_get_stats(p, &s1);
        if (!same(got, n, want, nwant)) {
            char a[256], b[256];
            pyt_failf(py, "first call after step %d: tids %s, the fixture's %s", k, show(got, n, a, sizeof a),
                  show(want, nwant, b, sizeof b));
        }
        changes += s1.thread_lists_changed > s0.thread_lists_changed;
        check_steady(py, p, want, nwant, k);
    }
    /* 12 steps change the list; two of them end a thread and start one,
     * which may leave every link as it was (same addresses): those are
     * still right above, as every field is read afresh. */
    if (changes < 10)
        pyt_failf(py, "only %d of 12 changes were seen by the links", changes);
    printf("[%s] %d steps, %d changes seen from the links\n", py, k, changes);
out:
    pyt_stop(&c);
    py_proc_free(p);
}

static void test_changes_seen_at_once(void **state)
{
    pyt_list l;
    char fixture[PATH_MAX];

    pyt_repo_path(fixture, sizeof fixture, FIXTURE);
    pyt_find(&l);
    if (l.n == 0)
        skip();
    for (int i = 0; i < l.n; i++)
        check_interpreter(l.path[i], fixture);
    assert_int_equal(pyt_failures, 0);
}

/* With the default refresh the list is read in full again every few
 * ms (new interpreters), and asking for the GIL always reads in full. */
static void test_refresh_and_gil(void **state)
{
    pyt_list l;
    pyt_child c;
    char fixture[PATH_MAX], line[256], err[512];
    py_proc *p = NULL;
    long got[MAX_T];

    pyt_repo_path(fixture, sizeof fixture, FIXTURE);
    pyt_find(&l);
    if (l.n == 0)
        skip();
    char *argv[] = { l.path[0], fixture, NULL };
    assert_int_equal(pyt_spawn(&c, argv), 0);
    assert_int_equal(pyt_line(&c, line, sizeof line, 60000), 0);
    assert_int_equal(py_proc_attach(c.pid, &p, err, sizeof err), PY_OK);
    py_proc_stats s0, s1;
    py_proc_get_stats(p, &s0);
    for (int i = 0; i < 60; i++) {
        assert_int_equal(list_tids(p, got, 0), 1);
        usleep(1000);
    }
    py_proc_get_stats(p, &s1);
    uint64_t full = s1.thread_lists_full - s0.thread_lists_full;
    uint64_t steady = s1.thread_lists_steady - s0.thread_lists_steady;
    printf("60 calls 1 ms apart: %llu full, %llu steady\n", (unsigned long long)full,
           (unsigned long long)steady);
    assert_true(full >= 3 && steady >= 1 && full + steady == 60);
    for (int i = 0; i < 10; i++)
        assert_int_equal(list_tids(p, got, 1), 1);
    py_proc_get_stats(p, &s0);
    assert_int_equal(s0.thread_lists_full - s1.thread_lists_full, 10);
    py_proc_free(p);
    pyt_stop(&c);
}

/* Before 3.11 the kernel tid comes from struct pthread at an offset
 * found at attach; when it could not be found then (the threads were
 * unreadable at that moment), the next call finds it: tids are not
 * unknown for the rest of the recording. */
static void test_tid_offset_found_again(void **state)
{
    pyt_list l;
    char fixture[PATH_MAX], line[256], err[512];
    long got[MAX_T];
    int tried = 0;

    pyt_repo_path(fixture, sizeof fixture, FIXTURE);
    pyt_find(&l);
    for (int i = 0; i < l.n; i++) {
        pyt_child c;
        py_proc *p = NULL;
        char *argv[] = { l.path[i], fixture, NULL };
        if (pyt_spawn(&c, argv) != 0 || pyt_line(&c, line, sizeof line, 60000) != 0 ||
            py_proc_attach(c.pid, &p, err, sizeof err) != PY_OK) {
            pyt_failf(l.path[i], "fixture or attach failed: %s", err);
            pyt_stop(&c);
            continue;
        }
        int minor = 0;
        sscanf(py_proc_version(p), "3.%d", &minor);
        if (minor <= 10) {
            tried++;
            py_proc_forget_tid_offset(p);
            if (list_tids(p, got, 0) != 1 || got[0] != (long)c.pid)
                pyt_failf(l.path[i], "after the offset was lost: tid %ld, not %ld", got[0], (long)c.pid);
        }
        py_proc_free(p);
        pyt_stop(&c);
    }
    if (!tried)
        skip();
    assert_int_equal(pyt_failures, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_changes_seen_at_once),
        cmocka_unit_test(test_refresh_and_gil),
        cmocka_unit_test(test_tid_offset_found_again),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
