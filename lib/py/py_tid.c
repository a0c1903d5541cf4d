/*
 * py_tid.c — the kernel thread id of a Python thread before 3.11, which
 * has no native_thread_id field (docs/design/cpython.md §3).
 *
 * Method: PyThreadState.thread_id is the thread's pthread_t, which in
 * glibc and musl is the address of the thread's control block, and that
 * block holds the kernel tid at a fixed offset for a given C library.
 * We find the offset in our own control block (where gettid() appears
 * in pthread_self()'s first 2 KiB) and accept it if, in the target,
 * the main thread's control block holds its tid there and every other
 * thread state's block a distinct tid listed in /proc/PID/task, or 0 for
 * a thread that has just ended (see fits: constant thread churn).  If
 * our C library's offset does not fit (a container with another libc),
 * the target's own blocks are searched for an offset that fits.  When
 * nothing fits
 * the offset stays -1 and tids are reported unknown (-1) until a later
 * look finds it (pytid_recalibrate, py_tick.c, before each thread
 * list: the list is read there and handed to pytid_search).
 *
 * A target in another pid namespace (a container, unshare -p) knows its
 * threads by the ids of its own namespace, which is what struct pthread
 * and, 3.11+, native_thread_id hold; /proc shows ours.  The task list is
 * then translated through the last NSpid entry of each task's status
 * file (py_ns_tid), and the tids lib/py reports are the target's own.
 */
#include "lib/py/py_internal.h"

#include "lib/util/alloc.h"
#include "lib/util/grow.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SEARCH 2048   /* bytes of struct pthread searched */
#define MAX_CAND 16
#define MAX_TS PYTID_MAX_THREADS

int64_t pytid_self(void)
{
    return (int64_t)syscall(SYS_gettid);
}

/* Offsets in our own struct pthread holding our tid. */
static int local_candidates(int64_t *cand, int max)
{
    const uint8_t *self = (const uint8_t *)(uintptr_t)pthread_self();
    int32_t tid = (int32_t)pytid_self();
    int n = 0;

    /* The block may be shorter than SEARCH bytes before a mapping ends:
     * read it through the validated local reader, halving on failure. */
    pymem m;
    uint8_t buf[SEARCH];
    if (pymem_init_local(&m) != 0)
        return 0;
    size_t len = SEARCH;
    while (len >= 64 && pymem_read(&m, (uint64_t)(uintptr_t)self, buf, len) != 0)
        len /= 2;
    pymem_cleanup(&m);
    if (len < 64)
        return 0;
    for (size_t off = 0; off + 4 <= len && n < max; off += 4) {
        int32_t v;
        memcpy(&v, buf + off, 4);
        if (v == tid)
            cand[n++] = (int64_t)off;
    }
    return n;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Ids of the NSpid line of a status file: count (0 if none), the first
 * and the last. */
static int nspid(const char *path, int64_t *first, int64_t *last)
{
    char buf[2048];
    FILE *f = fopen(path, "re");
    int n = 0;

    if (!f)
        return -1;
    while (fgets(buf, sizeof buf, f)) {
        if (strncmp(buf, "NSpid:", 6) != 0)
            continue;
        char *p = buf + 6, *end;
        for (;;) {
            long long v = strtoll(p, &end, 10);
            if (end == p)
                break;
            if (n++ == 0)
                *first = v;
            *last = v;
            p = end;
        }
        break;
    }
    fclose(f);
    return n;
}

int py_ns_nested(pid_t pid)
{
    char fn[64];
    int64_t a = 0, b = 0;

    snprintf(fn, sizeof fn, "/proc/%d/status", (int)pid);
    return nspid(fn, &a, &b) > 1;
}

int64_t py_ns_tid(pid_t pid, int64_t tid)
{
    char fn[96];
    int64_t a = 0, b = 0;

    if (tid <= 0)
        return -1;
    snprintf(fn, sizeof fn, "/proc/%d/task/%lld/status", (int)pid, (long long)tid);
    int n = nspid(fn, &a, &b);
    if (n < 0)
        return -1;
    return n > 1 ? b : tid;   /* no NSpid line (Linux < 4.1): one namespace */
}

/* Sorted tids of the target's tasks, as the target knows them; count or
 * -1. */
static int list_tasks(pid_t pid, int64_t **out)
{
    int nested = py_ns_nested(pid);
    char fn[64];
    DIR *d;
    struct dirent *e;
    int64_t *t = NULL;
    int n = 0;
    size_t cap = 0;

    snprintf(fn, sizeof fn, "/proc/%d/task", (int)pid);
    d = opendir(fn);
    if (!d)
        return -1;
    while ((e = readdir(d))) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        if (trcu_grow((void **)&t, &cap, (size_t)n, sizeof *t) != TRC_OK) {
            trc_free(t);
            closedir(d);
            return -1;
        }
        t[n] = atoll(e->d_name);
        if (nested && (t[n] = py_ns_tid(pid, t[n])) <= 0)
            continue;   /* gone meanwhile */
        n++;
    }
    closedir(d);
    qsort(t, (size_t)n, sizeof *t, cmp_i64);
    *out = t;
    return n;
}

static int has_task(const int64_t *t, int n, int64_t tid)
{
    return tid > 0 && bsearch(&tid, t, (size_t)n, sizeof *t, cmp_i64) != NULL;
}

/* What a calibration knows of the target's threads: its tasks as listed
 * before the control blocks were read and, listed once more when a
 * block names a tid the first list lacks, after (a thread started in
 * between, maybe in a control block an ended thread left); and its own
 * pid as it knows it, the main thread's tid. */
typedef struct tidfacts {
    pid_t pid;
    int64_t main_tid;
    int64_t *tasks, *later;
    int ntasks, nlater;   /* nlater -1: not listed again yet */
} tidfacts;

static int live(tidfacts *f, int64_t tid)
{
    if (has_task(f->tasks, f->ntasks, tid))
        return 1;
    if (f->nlater < 0)
        f->nlater = list_tasks(f->pid, &f->later);
    return f->nlater > 0 && has_task(f->later, f->nlater, tid);
}

/* Does off give every control block a distinct live tid?  Anchored (one
 * block at off holds the main thread's tid, which no other thread ever
 * has and which lives as long as the process), a block whose thread has
 * ended may instead hold 0 (the kernel clears the field at the thread's
 * exit: glibc and musl register it as the clear-tid address) or be gone:
 * under constant thread churn some thread is always ending between the
 * list and the look, and an offset that needed every block live was
 * never accepted (every tid then unknown).  Without the anchor (the main
 * thread has no thread state: an embedding program) every block must
 * hold a live tid, as the only evidence. */
static int fits(py_proc *p, const uint64_t *pth, int npth, tidfacts *f, int64_t off)
{
    int64_t seen[MAX_TS];
    int32_t v[MAX_TS];
    uint8_t ok[MAX_TS];
    int anchored = 0, nseen = 0;

    for (int i = 0; i < npth; i++) {
        uint8_t b[4];
        ok[i] = pymem_read(&p->mem, pth[i] + (uint64_t)off, b, 4) == 0;
        memcpy(&v[i], b, 4);
        if (!ok[i])
            v[i] = 0;
        anchored |= ok[i] && f->main_tid > 0 && v[i] == f->main_tid;
    }
    for (int i = 0; i < npth; i++) {
        if (anchored && v[i] == 0)
            continue;   /* ended, or its block unmapped */
        if (!ok[i] || !live(f, v[i]))
            return 0;
        for (int k = 0; k < nseen; k++)
            if (seen[k] == v[i])
                return 0;
        seen[nseen++] = v[i];
    }
    return nseen > 0;
}

/* Another C library than ours: an offset found in the target's own
 * blocks, first where a block holds the main thread's tid, else where
 * the first block holds any live tid. */
static int64_t search_target(py_proc *p, const uint64_t *pth, int npth, tidfacts *f)
{
    uint8_t buf[SEARCH];

    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < (pass ? 1 : npth); i++) {
            size_t len = SEARCH;
            while (len >= 64 && pymem_read(&p->mem, pth[i], buf, len) != 0)
                len /= 2;
            for (size_t off = 0; len >= 64 && off + 4 <= len; off += 4) {
                int32_t v;
                memcpy(&v, buf + off, 4);
                int want = pass ? has_task(f->tasks, f->ntasks, v) : f->main_tid > 0 && v == f->main_tid;
                if (want && fits(p, pth, npth, f, (int64_t)off))
                    return (int64_t)off;
            }
        }
    }
    return -1;
}

void pytid_search(py_proc *p, const py_thread_info *ti, int n)
{
    uint64_t pth[MAX_TS];
    int64_t cand[MAX_CAND];
    int npth = 0;
    tidfacts f = { p->pid, -1, NULL, NULL, 0, -1 };

    p->tid_off = -1;
    for (int i = 0; i < n; i++) {
        /* a thread state made for a thread being started holds its
         * creator's pthread_t until the thread runs (3.10 and before):
         * the same control block twice, not two threads with one tid */
        int dup = 0;
        for (int k = 0; k < npth; k++)
            dup |= pth[k] == ti[i].pthread_id;
        if (ti[i].pthread_id && !(ti[i].pthread_id & 7) && !dup)
            pth[npth++] = ti[i].pthread_id;
    }
    f.ntasks = list_tasks(p->pid, &f.tasks);
    if (npth == 0 || f.ntasks <= 0)
        goto out;
    f.main_tid = py_ns_tid(p->pid, p->pid);
    int nc = local_candidates(cand, MAX_CAND);
    for (int i = 0; i < nc; i++) {
        if (fits(p, pth, npth, &f, cand[i])) {
            p->tid_off = cand[i];
            goto out;
        }
    }
    p->tid_off = search_target(p, pth, npth, &f);
out:
    trc_free(f.tasks);
    trc_free(f.later);
}
