/*
 * dump_groups.c — `trec --dump` of a process tree: the threads of all
 * processes grouped by identical stack (the same functions, files and
 * lines, outermost to innermost), each group with the pids that have
 * it.  A hung job of many ranks is mostly one stack; the rank that is
 * elsewhere is the group with one pid, seen at a glance
 * (lib/rec/dump.h).
 *
 * Frames are compared by content, not by pointer: each process has its
 * own reader, so the same frame of two processes is two entries.
 */
#include "lib/rec/dump.h"
#include "lib/util/alloc.h"
#include "lib/util/grow.h"
#include "lib/util/hashtab.h"

#include <stdlib.h>
#include <string.h>

static uint64_t stack_hash(const rec_dump_thread *d)
{
    uint64_t h = trch_hash_u64((uint64_t)d->depth);
    for (int i = 0; i < d->depth; i++) {
        const py_frame_info *f = d->frames[i];
        h = trch_hash_more(h, f->function, strlen(f->function));
        h = trch_hash_more(h, f->file, strlen(f->file));
        h = trch_hash_more_u64(h, f->line);
    }
    return h;
}

static int same_frame(const py_frame_info *a, const py_frame_info *b)
{
    return a == b || (a->line == b->line && strcmp(a->function, b->function) == 0 &&
                      strcmp(a->file, b->file) == 0);
}

static int same_stack(const rec_dump_thread *a, const rec_dump_thread *b)
{
    if (a->depth != b->depth)
        return 0;
    for (int i = 0; i < a->depth; i++)
        if (!same_frame(a->frames[i], b->frames[i]))
            return 0;
    return 1;
}

static int cmp_pid(const void *a, const void *b)
{
    pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
    return (x > y) - (x < y);
}

/* Most pids first, then by lowest pid: the common stack leads, the odd
 * ones out follow. */
static int cmp_group(const void *a, const void *b)
{
    const rec_dump_group *x = a, *y = b;
    if (x->n_pids != y->n_pids)
        return x->n_pids < y->n_pids ? 1 : -1;
    return cmp_pid(&x->pids[0], &y->pids[0]);
}

/* Adds pid to g unless it is there (a process's threads come together,
 * so a repeat is the last pid added). */
static int add_pid(rec_dump_group *g, pid_t pid)
{
    if (g->n_pids && g->pids[g->n_pids - 1] == pid)
        return 0;
    if (trcu_grow((void **)&g->pids, &g->pids_cap, g->n_pids, sizeof *g->pids) != TRC_OK)
        return -1;
    g->pids[g->n_pids++] = pid;
    return 0;
}

int rec_dump_group_stacks(const rec_dump_proc *procs, int n, rec_dump_groups *out)
{
    memset(out, 0, sizeof *out);
    trch_index index;
    memset(&index, 0, sizeof index);
    size_t cap = 0;
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        for (int j = 0; j < procs[i].n_threads && rc == 0; j++) {
            const rec_dump_thread *d = &procs[i].threads[j];
            if (!d->python || d->depth <= 0)
                continue; /* no stack to compare */
            uint64_t h = stack_hash(d);
            trch_probe p;
            uint32_t k = trch_first(&index, h, &p);
            while (k != TRCH_NONE && !same_stack(out->v[k].stack, d))
                k = trch_next(&index, &p);
            if (k == TRCH_NONE) {
                k = (uint32_t)out->n;
                if (trcu_grow((void **)&out->v, &cap, out->n, sizeof *out->v) != TRC_OK ||
                    trch_add(&index, h, k) != TRC_OK) {
                    rc = -1;
                    break;
                }
                out->n++;
                out->v[k].stack = d;
            }
            out->v[k].n_threads++;
            if (add_pid(&out->v[k], procs[i].pid) != 0)
                rc = -1;
        }
    }
    trch_index_cleanup(&index);
    if (rc != 0) {
        rec_dump_groups_free(out);
        return -1;
    }
    for (size_t g = 0; g < out->n; g++)
        qsort(out->v[g].pids, out->v[g].n_pids, sizeof *out->v[g].pids, cmp_pid);
    if (out->n > 1)
        qsort(out->v, out->n, sizeof *out->v, cmp_group);
    return 0;
}

void rec_dump_groups_free(rec_dump_groups *g)
{
    for (size_t i = 0; i < g->n; i++)
        trc_free(g->v[i].pids);
    trc_free(g->v);
    memset(g, 0, sizeof *g);
}
