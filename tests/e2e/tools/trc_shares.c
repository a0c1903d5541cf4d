/*
 * trc_shares — test helper for the sampling-accuracy case
 * (tests/e2e/trec_accuracy.sh): reads a trace with the public reader API
 * and prints, per leaf function, its share of the on-CPU samples:
 *
 *   FUNCTION<TAB>SHARE_PERCENT<TAB>SAMPLES
 *
 * sorted by samples, most first.  With --pid PID only that process's
 * threads count.  Samples without Python frames are "<no python>".
 * Exit status 0, or 2 when the trace cannot be read.
 */
#include "trc/trc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct share {
    const char *function;  /* borrowed from the reader */
    uint64_t n;
} share;

static int by_count(const void *a, const void *b)
{
    const share *x = a, *y = b;
    return x->n < y->n ? 1 : x->n > y->n ? -1 : strcmp(x->function, y->function);
}

int main(int argc, char **argv)
{
    long long only_pid = -1;
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--pid") == 0 && i + 1 < argc)
            only_pid = atoll(argv[++i]);
        else
            path = argv[i];
    }
    if (!path) {
        fprintf(stderr, "usage: trc_shares [--pid PID] FILE\n");
        return 2;
    }
    trc_status st;
    trc_reader *r = trc_reader_open_path(path, &st);
    if (!r) {
        fprintf(stderr, "trc_shares: %s: %s\n", path, trc_status_str(st));
        return 2;
    }
    share *v = NULL;
    size_t n = 0, cap = 0;
    uint64_t total = 0;
    const trc_event *ev;
    while ((st = trc_reader_next(r, &ev)) == TRC_OK) {
        if (ev->type != TRC_EV_SAMPLE || !(ev->u.sample.flags & TRC_SAMPLE_ON_CPU))
            continue;
        const trc_thread *t = trc_reader_thread(r, ev->u.sample.thread);
        if (only_pid >= 0 && (!t || t->pid != only_pid))
            continue;
        const trc_stack *s = trc_reader_stack(r, ev->u.sample.stack);
        const trc_frame *f = s && s->depth ? trc_reader_frame(r, s->frame) : NULL;
        const char *fn = f ? f->function : "<no python>";
        size_t i = 0;
        while (i < n && strcmp(v[i].function, fn) != 0)
            i++;
        if (i == n) {
            if (n == cap) {
                cap = cap ? cap * 2 : 64;
                share *w = realloc(v, cap * sizeof *w);
                if (!w)
                    return 2;
                v = w;
            }
            v[n++] = (share){fn, 0};
        }
        v[i].n += ev->u.sample.count;
        total += ev->u.sample.count;
    }
    if (st != TRC_ERR_EOF) {
        fprintf(stderr, "trc_shares: %s\n", trc_reader_error(r));
        return 2;
    }
    qsort(v, n, sizeof *v, by_count);
    for (size_t i = 0; i < n; i++)
        printf("%s\t%.2f\t%llu\n", v[i].function, total ? 100.0 * (double)v[i].n / (double)total : 0.0,
               (unsigned long long)v[i].n);
    free(v);
    trc_reader_free(r);
    return 0;
}
