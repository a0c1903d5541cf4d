/*
 * py_selftest_lib.c — a shared library that a Python process loads with
 * ctypes to check lib/py's in-process walker (py_proc_attach_self +
 * py_proc_stack_self_thread) from the inside, the way the CUPTI
 * injection uses it.  Built by mk/py.mk as $(BUILD)/py/libpytest.so;
 * driven by fixtures/workloads/py_selfcheck.py.  Test code only.
 *
 *   int trc_pytest_stack(char *buf, int cap)
 *       The calling thread's Python stack, leaf first, one frame per
 *       line as "function\tfile\tline\n".  Returns the depth, or -1 with
 *       the reason in buf.  Must be called through ctypes.CDLL (GIL
 *       released): the walker must not need it.
 *   const char *trc_pytest_version(void)
 *   int trc_pytest_thread_name(long long tid, char *buf, int cap)
 *       py_proc_thread_name of the calling process: 1 with the name in
 *       buf, 0 when there is none.
 *   double trc_pytest_bench(int n)
 *       Median ns of n calls of py_proc_stack_self_thread (bench/py_walk.sh).
 */
#include "lib/py/pyproc.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static pthread_mutex_t attach_lock = PTHREAD_MUTEX_INITIALIZER;
static py_proc *self_proc;
static char attach_err[512];

static py_proc *get_proc(void)
{
    pthread_mutex_lock(&attach_lock);
    if (!self_proc && py_proc_attach_self(&self_proc, attach_err, sizeof attach_err) != PY_OK)
        self_proc = NULL;
    py_proc *p = self_proc;
    pthread_mutex_unlock(&attach_lock);
    return p;
}

const char *trc_pytest_version(void)
{
    py_proc *p = get_proc();
    return p ? py_proc_version(p) : attach_err;
}

int trc_pytest_stack(char *buf, int cap)
{
    const py_frame_info *f[2048];
    py_proc *p = get_proc();

    if (cap <= 0)
        return -1;
    buf[0] = '\0';
    if (!p) {
        snprintf(buf, (size_t)cap, "attach: %s", attach_err);
        return -1;
    }
    int n = py_proc_stack_self_thread(p, f, 2048);
    if (n < 0) {
        snprintf(buf, (size_t)cap, "stack: invalid (status %d)", (int)py_proc_last_error(p));
        return -1;
    }
    size_t used = 0;
    for (int i = 0; i < n; i++) {
        int w = snprintf(buf + used, (size_t)cap - used, "%s\t%s\t%u\n", f[i]->function, f[i]->file,
                         f[i]->line);
        if (w < 0 || (size_t)w >= (size_t)cap - used) {
            snprintf(buf, (size_t)cap, "buffer too small");
            return -1;
        }
        used += (size_t)w;
    }
    return n;
}

int trc_pytest_thread_name(long long tid, char *buf, int cap)
{
    py_proc *p = get_proc();
    const char *n = p ? py_proc_thread_name(p, (int64_t)tid) : NULL;

    if (cap <= 0)
        return 0;
    snprintf(buf, (size_t)cap, "%s", n ? n : "");
    return n != NULL;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double trc_pytest_bench(int n)
{
    const py_frame_info *f[2048];
    py_proc *p = get_proc();

    if (!p || n <= 0)
        return -1;
    double *t = malloc(sizeof *t * (size_t)n);
    if (!t)
        return -1;
    for (int i = 0; i < n; i++) {
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        int d = py_proc_stack_self_thread(p, f, 2048);
        clock_gettime(CLOCK_MONOTONIC, &b);
        t[i] = d < 0 ? 1e12 : (double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec);
    }
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    double med = t[n / 2];
    free(t);
    return med;
}
