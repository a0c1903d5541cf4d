/*
 * test_py_attach.c — lib/py's out-of-process walker against a live
 * fixture (fixtures/workloads/py_stacks_ünï.py) under every CPython
 * found at run time (tests/support/pyself/py_testutil.h).  For each one:
 * version string, _PyRuntime address (vs ctypes inside the target),
 * thread count and native tids (vs what each thread printed), the GIL,
 * and for every thread the first frame in the fixture: function
 * (qualified on 3.11+), file (non-ASCII path) and line (found by the
 * MARK comments in the fixture source, not hard-coded); the caller
 * frame of the main thread; a 600-deep recursion; a generator; a
 * UCS-2 and a UCS-4 function name; repeated samples of a spinning
 * thread (torn reads must be rejected, never invented); room exceeded;
 * the target exiting.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "lib/py/pyproc.h"
#include "tests/support/pyself/py_testutil.h"
#include "lib/util/alloc.h"

#include <dirent.h>

#define FIXTURE "fixtures/workloads/py_stacks_\xc3\xbcn\xc3\xaf.py"
#define MAX_MARK 16
#define MAX_FRAMES 4096

typedef struct mark {
    char name[32];
    int lines[12];
    int nlines;
} mark;

static mark marks[MAX_MARK];
static int nmarks;
static char fixture[PATH_MAX];

/* Reads "# MARK: name" comments of the fixture into marks[]. */
static void load_marks(void)
{
    FILE *f = fopen(fixture, "r");
    char line[512];
    int no = 0;

    assert_non_null(f);
    while (fgets(line, sizeof line, f)) {
        no++;
        char *m = strstr(line, "# MARK: ");
        if (!m)
            continue;
        char name[32];
        if (sscanf(m + 8, "%31s", name) != 1)
            continue;
        int i;
        for (i = 0; i < nmarks && strcmp(marks[i].name, name) != 0; i++)
            ;
        if (i == nmarks) {
            assert_true(nmarks < MAX_MARK);
            snprintf(marks[nmarks++].name, sizeof marks[0].name, "%s", name);
        }
        if (marks[i].nlines < 12)
            marks[i].lines[marks[i].nlines++] = no;
    }
    fclose(f);
}

static const mark *find_mark(const char *name)
{
    for (int i = 0; i < nmarks; i++)
        if (strcmp(marks[i].name, name) == 0)
            return &marks[i];
    return NULL;
}

static int mark_has(const char *name, unsigned line)
{
    const mark *m = find_mark(name);
    for (int i = 0; m && i < m->nlines; i++)
        if ((unsigned)m->lines[i] == line)
            return 1;
    return 0;
}

typedef struct expect {
    const char *marker;
    const char *fn_old, *fn_qual;   /* co_name (<3.11), co_qualname (3.11+) */
} expect;

static const expect expects[] = {
    { "main", "\xe8\xa8\x88\xe7\xae\x97", "\xe8\xa8\x88\xe7\xae\x97" },   /* 計算 */
    { "sleep", "sleeper", "sleeper" },
    { "method", "run_method", "Worker.run_method" },
    { "generator", "producer", "producer" },
    { "deep-leaf", "recurse", "recurse" },
    { "astral", "\xf0\xa0\x80\x8b\xf0\xa0\x80\x80", "\xf0\xa0\x80\x8b\xf0\xa0\x80\x80" }, /* 𠀋𠀀 */
    { "spin", "spinner", "spinner" },
    { "churn", "churn", "churn" },
};

static const expect *expect_for(const char *marker)
{
    for (size_t i = 0; i < sizeof expects / sizeof expects[0]; i++)
        if (strcmp(expects[i].marker, marker) == 0)
            return &expects[i];
    return NULL;
}

/* Index of the first frame in the fixture file, or -1. */
static int first_fixture_frame(const py_frame_info **f, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(f[i]->file, fixture) == 0)
            return i;
    return -1;
}

typedef struct tinfo {
    long tid;
    char marker[32];
} tinfo;

static int in_tasks(pid_t pid, long tid)
{
    char fn[64];
    snprintf(fn, sizeof fn, "/proc/%d/task/%ld", (int)pid, tid);
    return access(fn, F_OK) == 0;
}

/* A stack of the thread that keeps calling and returning: every frame
 * in the fixture must be churn, bounce or the generator expression
 * inside bounce, at one of their MARK lines, under Thread._bootstrap. */
static int churn_ok(const py_frame_info **f, int n, int qual, char *why, size_t wn)
{
    for (int i = 0; i < n; i++) {
        if (strcmp(f[i]->file, fixture) != 0)
            continue;
        const char *fn = f[i]->function;
        int gen = strcmp(fn, "<genexpr>") == 0 || strcmp(fn, "bounce.<locals>.<genexpr>") == 0;
        if (!gen && ((strcmp(fn, "churn") != 0 && strcmp(fn, "bounce") != 0) ||
                     !mark_has("churn", f[i]->line))) {
            snprintf(why, wn, "churn: frame %d is %s:%u", i, fn, f[i]->line);
            return 0;
        }
    }
    if (strcmp(f[n - 1]->function, qual ? "Thread._bootstrap" : "_bootstrap") != 0) {
        snprintf(why, wn, "churn: outermost frame is %s", f[n - 1]->function);
        return 0;
    }
    return 1;
}

/* Checks one thread's stack; returns 1 if it matches.  why gets the
 * reason otherwise. */
static int check_stack(const char *marker, int qual, const py_frame_info **f, int n, char *why,
                       size_t wn)
{
    const expect *e = expect_for(marker);
    const char *want = qual ? e->fn_qual : e->fn_old;
    int i = first_fixture_frame(f, n);

    if (n <= 0 || i < 0) {
        snprintf(why, wn, "%s: depth %d, no frame in the fixture", marker, n);
        return 0;
    }
    if (strcmp(marker, "churn") == 0)
        return churn_ok(f, n, qual, why, wn);
    if (strcmp(f[i]->function, want) != 0 || !mark_has(marker, f[i]->line)) {
        snprintf(why, wn, "%s: got %s:%u, want %s at the MARK line", marker, f[i]->function,
                 f[i]->line, want);
        return 0;
    }
    if (strcmp(marker, "main") == 0) {
        const char *caller = qual ? "Outer.method" : "method";
        if (i + 1 >= n || strcmp(f[i + 1]->function, caller) != 0 ||
            !mark_has("main-caller", f[i + 1]->line) || i + 2 >= n ||
            strcmp(f[i + 2]->function, "<module>") != 0) {
            snprintf(why, wn, "main: caller frames wrong");
            return 0;
        }
    }
    if (strcmp(marker, "deep-leaf") == 0) {
        int k = 0;
        for (int j = i + 1; j < n && strcmp(f[j]->function, "recurse") == 0; j++, k++)
            if (!mark_has("deep", f[j]->line)) {
                snprintf(why, wn, "deep: frame %d at line %u", j, f[j]->line);
                return 0;
            }
        if (k != 600) {
            snprintf(why, wn, "deep: %d recursive frames, want 600", k);
            return 0;
        }
    }
    if (strcmp(marker, "generator") == 0 &&
        (i + 1 >= n || strcmp(f[i + 1]->function, "consumer") != 0)) {
        snprintf(why, wn, "generator: caller is not consumer");
        return 0;
    }
    return 1;
}

static void check_interpreter(const char *py)
{
    pyt_child c;
    char *argv[] = { (char *)py, fixture, "--runtime", NULL };
    char line[1024], err[512], version[32] = "";
    tinfo ti[16];
    int nti = 0, count = -1;
    unsigned long long runtime = 0;
    py_proc *p = NULL;

    if (pyt_spawn(&c, argv) != 0) {
        pyt_failf(py, "cannot run");
        return;
    }
    while (pyt_line(&c, line, sizeof line, 60000) == 0) {
        if (sscanf(line, "thread %ld %31s", &ti[nti].tid, ti[nti].marker) == 2 && nti < 15)
            nti++;
        else if (sscanf(line, "runtime %llx", &runtime) == 1)
            ;
        else if (sscanf(line, "ready %d %31s", &count, version) == 2)
            break;
    }
    if (count < 0) {
        pyt_failf(py, "fixture did not become ready");
        goto out;
    }
    printf("[%s] CPython %s, %d threads\n", py, version, count);
    py_status st = py_proc_attach(c.pid, &p, err, sizeof err);
    if (st != PY_OK) {
        pyt_failf(py, "attach: status %d: %s", st, err);
        goto out;
    }
    if (strcmp(py_proc_version(p), version) != 0)
        pyt_failf(py, "version %s, want %s", py_proc_version(p), version);
    /* 3.8-3.12: a table from that minor's headers; 3.13+: the target's
     * _Py_DebugOffsets read with its minor's list */
    {
        char minor[16], want[64];
        snprintf(minor, sizeof minor, "%.*s", (int)strcspn(version + 2, ".") + 2, version);
        if (atoi(version + 2) >= 13)
            snprintf(want, sizeof want, "_Py_DebugOffsets (%s list", minor);
        else
            snprintf(want, sizeof want, "the %s.", minor);
        if (strncmp(py_proc_layout_source(p), want, strlen(want)) != 0)
            pyt_failf(py, "layout source '%s', want '%s...'", py_proc_layout_source(p), want);
    }
    if (py_proc_pid(p) != c.pid)
        pyt_failf(py, "pid");
    if (runtime && py_proc_runtime(p) != runtime)
        pyt_failf(py, "_PyRuntime at 0x%llx, ctypes says 0x%llx",
              (unsigned long long)py_proc_runtime(p), runtime);
    int qual = strncmp(version, "3.8", 3) != 0 && strncmp(version, "3.9", 3) != 0 &&
               strncmp(version, "3.10", 4) != 0;

    py_thread_info th[64];
    const py_frame_info *f[MAX_FRAMES];
    int ok_all = 0;
    char why[256] = "";
    /* Threads may still be on their way into the wait: retry for a while. */
    for (int attempt = 0; attempt < 100 && !ok_all; attempt++) {
        if (attempt)
            usleep(50000);
        int n = py_proc_threads(p, th, 64, 1);
        if (n != count) {
            snprintf(why, sizeof why, "py_proc_threads gave %d, want %d", n, count);
            continue;
        }
        int gil_holders = 0, matched = 0;
        ok_all = 1;
        for (int k = 0; k < n; k++) {
            if (th[k].holds_gil < 0)
                snprintf(why, sizeof why, "GIL state undetermined"), ok_all = 0;
            gil_holders += th[k].holds_gil == 1;
            if (!in_tasks(c.pid, (long)th[k].tid)) {
                snprintf(why, sizeof why, "tid %lld not in /proc/PID/task", (long long)th[k].tid);
                ok_all = 0;
                continue;
            }
            int j;
            for (j = 0; j < nti && ti[j].tid != th[k].tid; j++)
                ;
            if (j == nti) {
                snprintf(why, sizeof why, "tid %lld not one the fixture printed", (long long)th[k].tid);
                ok_all = 0;
                continue;
            }
            matched++;
            int d = py_proc_stack(p, th[k].tstate, f, MAX_FRAMES);
            if (!check_stack(ti[j].marker, qual, f, d, why, sizeof why))
                ok_all = 0;
        }
        if (gil_holders > 1)
            snprintf(why, sizeof why, "%d GIL holders", gil_holders), ok_all = 0;
        if (matched != nti)
            ok_all = 0;
    }
    if (!ok_all)
        pyt_failf(py, "%s", why);

    /* The GIL: only the two busy threads (spin, churn) ever hold it. */
    int held = 0;
    for (int s = 0; s < 300; s++) {
        int n = py_proc_threads(p, th, 64, 1);
        for (int k = 0; k < n; k++) {
            if (th[k].holds_gil != 1)
                continue;
            int j;
            for (j = 0; j < nti && ti[j].tid != th[k].tid; j++)
                ;
            if (j == nti || (strcmp(ti[j].marker, "spin") != 0 && strcmp(ti[j].marker, "churn") != 0))
                pyt_failf(py, "GIL held by %s", j == nti ? "an unknown thread" : ti[j].marker);
            held++;
        }
    }
    if (held == 0)
        pyt_failf(py, "the GIL was never seen held");

    /* The main thread's tid is the pid; room exceeded; torn-read safety. */
    int n = py_proc_threads(p, th, 64, 0);
    int seen_main = 0;
    for (int k = 0; k < n; k++) {
        seen_main |= th[k].tid == c.pid;
        if (th[k].holds_gil != -1)
            pyt_failf(py, "holds_gil should be -1 when not asked");
    }
    if (!seen_main)
        pyt_failf(py, "no thread with tid == pid");
    for (int k = 0; k < n; k++) {
        int j;
        for (j = 0; j < nti && ti[j].tid != th[k].tid; j++)
            ;
        if (j == nti)
            continue;
        if (strcmp(ti[j].marker, "deep-leaf") == 0) {
            int d = py_proc_stack(p, th[k].tstate, f, 100);
            if (d != -1 || py_proc_last_error(p) != PY_ERR_IO)
                pyt_failf(py, "deep stack with room for 100 gave %d", d);
        }
        if (strcmp(ti[j].marker, "churn") == 0) {
            int bad = 0, total = 3000;
            for (int s = 0; s < total; s++) {
                int d = py_proc_stack(p, th[k].tstate, f, MAX_FRAMES);
                if (d < 0) {
                    bad++;
                    continue;
                }
                if (!churn_ok(f, d, qual, why, sizeof why))
                    pyt_failf(py, "churn sample %d: %s", s, why);
            }
            /* Rejections are right (torn reads); only a flood is a bug. */
            if (bad > total / 2)
                pyt_failf(py, "%d of %d churn samples invalid", bad, total);
            printf("[%s] churn: %d/%d samples rejected as torn\n", py, bad, total);
        }
        if (strcmp(ti[j].marker, "spin") == 0) {
            int bad = 0, total = 2000;
            for (int s = 0; s < total; s++) {
                int d = py_proc_stack(p, th[k].tstate, f, MAX_FRAMES);
                if (d < 0) {
                    bad++;
                    continue;
                }
                /* The leaf is spinner itself or Event.is_set called from it. */
                int i = first_fixture_frame(f, d);
                if (i < 0 || i > 1 || strcmp(f[i]->function, "spinner") != 0 ||
                    !mark_has("spin", f[i]->line) || strcmp(f[d - 1]->function, qual ? "Thread._bootstrap" : "_bootstrap") != 0)
                    pyt_failf(py, "spinner sample %d: %s:%u", s, i >= 0 ? f[i]->function : "-",
                          i >= 0 ? f[i]->line : 0);
            }
            if (bad > total / 4)
                pyt_failf(py, "%d of %d spinner samples invalid", bad, total);
            printf("[%s] spinner: %d/%d samples rejected as torn\n", py, bad, total);
        }
    }
    py_proc_stats stats;
    py_proc_get_stats(p, &stats);
    printf("[%s] %llu reads, %llu torn walks redone, %llu invalid\n", py,
           (unsigned long long)stats.reads, (unsigned long long)stats.torn_retries,
           (unsigned long long)stats.invalid_stacks);
    if (stats.reads == 0 || stats.code_cache_hits == 0 || stats.code_cache_misses == 0)
        pyt_failf(py, "statistics not counted");

    pyt_stop(&c);
    n = py_proc_threads(p, th, 64, 1);
    if (n != -1 || py_proc_last_error(p) != PY_ERR_GONE)
        pyt_failf(py, "after exit: %d threads, status %d", n, (int)py_proc_last_error(p));
out:
    py_proc_free(p);
    pyt_stop(&c);
}

static void test_every_interpreter(void **state)
{
    pyt_list l;

    pyt_repo_path(fixture, sizeof fixture, FIXTURE);
    load_marks();
    assert_non_null(find_mark("main"));
    assert_non_null(find_mark("deep"));
    pyt_find(&l);
    if (l.n == 0) {
        printf("no CPython 3.8+ found\n");
        skip();
    }
    for (int i = 0; i < l.n; i++)
        check_interpreter(l.path[i]);
    assert_int_equal(pyt_failures, 0);
}

/* Failing the Nth allocation anywhere in attach, thread list and stack
 * walk gives PY_ERR_NOMEM (or a -1 sample), never a crash or a leak
 * (the sanitizer build checks the latter). */
static void test_alloc_failures(void **state)
{
    pyt_list l;
    pyt_child c;
    char line[1024];

    pyt_repo_path(fixture, sizeof fixture, FIXTURE);
    pyt_find(&l);
    if (l.n == 0)
        skip();
    char *argv[] = { l.path[l.n - 1], fixture, NULL };
    assert_int_equal(pyt_spawn(&c, argv), 0);
    while (pyt_line(&c, line, sizeof line, 60000) == 0 && strncmp(line, "ready", 5) != 0)
        ;
    int ok = 0, nomem = 0;
    for (long k = 1; k <= 400; k++) {
        char err[512];
        py_proc *p = NULL;
        trc_alloc_fail_after(k);
        py_status st = py_proc_attach(c.pid, &p, err, sizeof err);
        if (st == PY_OK) {
            py_thread_info th[32];
            const py_frame_info *f[MAX_FRAMES];
            int n = py_proc_threads(p, th, 32, 1);
            for (int i = 0; i < n; i++)
                if (py_proc_stack(p, th[i].tstate, f, MAX_FRAMES) < 0)
                    assert_true(py_proc_last_error(p) == PY_ERR_NOMEM || py_proc_last_error(p) == PY_ERR_IO);
            ok++;
        } else {
            assert_int_equal(st, PY_ERR_NOMEM);
            assert_null(p);
            nomem++;
        }
        trc_alloc_fail_after(-1);
        py_proc_free(p);
    }
    printf("%d attaches failed for memory, %d went through\n", nomem, ok);
    assert_true(nomem > 0 && ok > 0);
    pyt_stop(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_interpreter),
        cmocka_unit_test(test_alloc_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
