/*
 * trc_stacks — test helper for tests/e2e/trec_*.sh: reads a trace with
 * the public reader API only (include/trc/trc.h) and prints what the
 * checks need as tab-separated lines, samples aggregated per (thread,
 * flags, stack):
 *
 *   segment  recorder  period_ns  command_line
 *   process  pid  ppid  interpreter  executable  command_line
 *   layout   pid  words                            (after a process line
 *            whose layout field is set: spec §7.5)
 *   thread   id  pid  tid  name                       (every definition/rename)
 *   exit     pid  exit_code  signal
 *   loss     kind  count  from_reader  pid  detail
 *   counter  name  unit  pid  n_values  min  max
 *   sample   pid  tid  flags  count  STACK           (STACK root first:
 *            frames joined by ';', each "function|file|line|first_line")
 *   end      samples  threads  processes  lost_samples   (segment end)
 *   stackless  pid  tid  n   (on-CPU samples with no Python frame that
 *            fall between two samples of the thread whose stacks hold
 *            $TRC_STACKS_ROOT, FUNC or FUNC@PART-OF-FILE; or have frames)
 *   span     pid  tid  first_ns  last_ns  samples   (a thread's first and
 *            last sample times and its samples: with the period, the
 *            ticks of its life the recorder did not take)
 *   stats    chunks  damaged_chunks  losses
 *
 * Exit status: 0 read cleanly, 1 read with damage/loss reported by the
 * reader, 2 unreadable.  Independent of the converters on purpose.
 */
#include "trc/trc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct agg {
    uint32_t thread, stack, flags;
    uint64_t count;
} agg;

typedef struct cnt {
    uint32_t id;
    uint64_t n;
    double min, max;
} cnt;

/* Per thread: on-CPU samples without frames since its last sample with
 * frames (pending), and those already known to lie between two. */
typedef struct gap {
    uint32_t thread;
    int seen;               /* a sample with frames came */
    uint64_t pending, between;
    int64_t first_ns, last_ns; /* its first and last sample times */
    uint64_t samples;
} gap;

static gap *gaps;
static size_t n_gaps, cap_gaps;
static agg *aggs;
static size_t n_aggs, cap_aggs;
static cnt *cnts;
static size_t n_cnts, cap_cnts;

static void *grow(void *p, size_t *cap, size_t size)
{
    size_t c = *cap ? *cap * 2 : 256;
    void *q = realloc(p, c * size);
    if (!q) {
        fprintf(stderr, "trc_stacks: out of memory\n");
        exit(2);
    }
    *cap = c;
    return q;
}

/* Linear probing would be faster; traces in tests are small. */
static void add_sample(const trc_sample *s)
{
    for (size_t i = n_aggs; i-- > 0;) {
        agg *a = &aggs[i];
        if (a->thread == s->thread && a->stack == s->stack && a->flags == s->flags) {
            a->count += s->count;
            return;
        }
    }
    if (n_aggs == cap_aggs)
        aggs = grow(aggs, &cap_aggs, sizeof *aggs);
    aggs[n_aggs++] = (agg){s->thread, s->stack, s->flags, s->count};
}

/* Does stack id hold a frame of function root ("FUNC" or
 * "FUNC@PART-OF-FILE"; FUNC is the part of a name after its last dot:
 * 3.11+ names are qualified)?  Any frame when root is NULL. */
static int holds(const trc_reader *r, uint32_t id, const char *root)
{
    if (!root)
        return id != 0;
    const char *at = strchr(root, '@');
    size_t flen = at ? (size_t)(at - root) : strlen(root);
    for (const trc_stack *s = trc_reader_stack(r, id); s && id; id = s->parent, s = trc_reader_stack(r, id)) {
        const trc_frame *f = trc_reader_frame(r, s->frame);
        if (!f)
            continue;
        const char *dot = strrchr(f->function, '.');
        const char *name = dot ? dot + 1 : f->function;
        if (strlen(name) == flen && strncmp(name, root, flen) == 0 && (!at || strstr(f->file, at + 1)))
            return 1;
    }
    return 0;
}

static void add_gap(const trc_reader *r, const trc_sample *s, const char *root)
{
    gap *g = NULL;
    for (size_t i = 0; i < n_gaps && !g; i++)
        if (gaps[i].thread == s->thread)
            g = &gaps[i];
    if (!g) {
        if (n_gaps == cap_gaps)
            gaps = grow(gaps, &cap_gaps, sizeof *gaps);
        g = &gaps[n_gaps++];
        *g = (gap){ .thread = s->thread, .first_ns = s->time_ns };
    }
    g->last_ns = s->time_ns + (int64_t)s->span_ns;
    g->samples += s->count;
    if (holds(r, s->stack, root)) {
        g->between += g->seen ? g->pending : 0;
        g->pending = 0;
        g->seen = 1;
    } else if (!s->stack && (s->flags & TRC_SAMPLE_ON_CPU)) {
        g->pending += s->count;
    }
}

static void add_counter(const trc_counter_value *v)
{
    for (size_t i = 0; i < n_cnts; i++) {
        if (cnts[i].id == v->counter) {
            cnts[i].n++;
            if (v->value < cnts[i].min)
                cnts[i].min = v->value;
            if (v->value > cnts[i].max)
                cnts[i].max = v->value;
            return;
        }
    }
    if (n_cnts == cap_cnts)
        cnts = grow(cnts, &cap_cnts, sizeof *cnts);
    cnts[n_cnts++] = (cnt){v->counter, 1, v->value, v->value};
}

static void print_stack(const trc_reader *r, uint32_t id)
{
    const trc_stack *s = trc_reader_stack(r, id);
    if (!s || s->depth == 0)
        return;
    uint32_t depth = s->depth;
    const trc_frame **frames = calloc(depth, sizeof *frames);
    if (!frames)
        exit(2);
    for (uint32_t i = depth; i-- > 0 && s;) {
        frames[i] = trc_reader_frame(r, s->frame);
        s = trc_reader_stack(r, s->parent);
    }
    for (uint32_t i = 0; i < depth; i++) {
        const trc_frame *f = frames[i];
        printf("%s%s|%s|%u|%u", i ? ";" : "", f ? f->function : "?", f ? f->file : "?",
               f ? f->line : 0, f ? f->first_line : 0);
    }
    free(frames);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: trc_stacks FILE|-\n");
        return 2;
    }
    trc_status st;
    trc_reader *r = strcmp(argv[1], "-") == 0 ? trc_reader_open_fd(0, "<stdin>", &st)
                                               : trc_reader_open_path(argv[1], &st);
    if (!r) {
        fprintf(stderr, "trc_stacks: %s: %s\n", argv[1], trc_status_str(st));
        return 2;
    }
    int damaged = 0;
    const trc_event *ev;
    while ((st = trc_reader_next(r, &ev)) == TRC_OK) {
        switch (ev->type) {
        case TRC_EV_SEGMENT:
            printf("segment\t%s\t%llu\t%s\n", ev->u.segment->recorder,
                   (unsigned long long)ev->u.segment->period_ns, ev->u.segment->command_line);
            break;
        case TRC_EV_PROCESS: {
            const trc_process *p = ev->u.process;
            printf("process\t%lld\t%lld\t%s\t%s\t%s\n", (long long)p->pid, (long long)p->ppid,
                   p->interpreter, p->executable, p->command_line);
            if (p->layout && p->layout[0])
                printf("layout\t%lld\t%s\n", (long long)p->pid, p->layout);
            break;
        }
        case TRC_EV_THREAD: {
            const trc_thread *t = ev->u.thread;
            printf("thread\t%u\t%lld\t%lld\t%s\n", t->id, (long long)t->pid, (long long)t->tid,
                   t->name);
            break;
        }
        case TRC_EV_PROCESS_EXIT:
            printf("exit\t%lld\t%d\t%d\n", (long long)ev->u.process_exit.pid,
                   ev->u.process_exit.exit_code, ev->u.process_exit.signal);
            break;
        case TRC_EV_LOSS:
            printf("loss\t%d\t%llu\t%d\t%lld\t%s\n", (int)ev->u.loss.kind,
                   (unsigned long long)ev->u.loss.count, ev->u.loss.from_reader,
                   (long long)ev->u.loss.pid, ev->u.loss.detail);
            if (ev->u.loss.from_reader)
                damaged = 1;
            break;
        case TRC_EV_SAMPLE:
            add_sample(&ev->u.sample);
            add_gap(r, &ev->u.sample, getenv("TRC_STACKS_ROOT"));
            break;
        case TRC_EV_COUNTER:
            add_counter(&ev->u.counter);
            break;
        case TRC_EV_SEGMENT_END:
            printf("end\t%llu\t%llu\t%llu\t%llu\n",
                   (unsigned long long)ev->u.segment_end.samples,
                   (unsigned long long)ev->u.segment_end.threads,
                   (unsigned long long)ev->u.segment_end.processes,
                   (unsigned long long)ev->u.segment_end.lost_samples);
            break;
        default:
            break;
        }
    }
    if (st != TRC_ERR_EOF) {
        fprintf(stderr, "trc_stacks: %s\n", trc_reader_error(r));
        trc_reader_free(r);
        return 2;
    }
    for (size_t i = 0; i < n_cnts; i++) {
        const trc_counter_def *d = trc_reader_counter(r, cnts[i].id);
        printf("counter\t%s\t%s\t%lld\t%llu\t%.0f\t%.0f\n", d ? d->name : "?", d ? d->unit : "?",
               d ? (long long)d->pid : -1LL, (unsigned long long)cnts[i].n, cnts[i].min,
               cnts[i].max);
    }
    for (size_t i = 0; i < n_aggs; i++) {
        const trc_thread *t = trc_reader_thread(r, aggs[i].thread);
        printf("sample\t%lld\t%lld\t%u\t%llu\t", t ? (long long)t->pid : -1LL,
               t ? (long long)t->tid : -1LL, aggs[i].flags, (unsigned long long)aggs[i].count);
        print_stack(r, aggs[i].stack);
        putchar('\n');
    }
    for (size_t i = 0; i < n_gaps; i++) {
        const trc_thread *t = trc_reader_thread(r, gaps[i].thread);
        printf("stackless\t%lld\t%lld\t%llu\n", t ? (long long)t->pid : -1LL,
               t ? (long long)t->tid : -1LL, (unsigned long long)gaps[i].between);
        printf("span\t%lld\t%lld\t%lld\t%lld\t%llu\n", t ? (long long)t->pid : -1LL,
               t ? (long long)t->tid : -1LL, (long long)gaps[i].first_ns,
               (long long)gaps[i].last_ns, (unsigned long long)gaps[i].samples);
    }
    trc_reader_stats stats;
    trc_reader_get_stats(r, &stats);
    printf("stats\t%llu\t%llu\t%llu\n", (unsigned long long)stats.chunks,
           (unsigned long long)stats.damaged_chunks, (unsigned long long)stats.losses);
    trc_reader_free(r);
    free(aggs);
    free(cnts);
    free(gaps);
    return damaged || stats.damaged_chunks ? 1 : 0;
}
