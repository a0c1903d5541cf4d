/*
 * lib/export/pipeline/select.c — the selection stage (contract and
 * rules in select.h): verdicts per event, cached per thread id and for
 * the last pid asked about.
 */
#include "lib/export/pipeline/select.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/alloc.h"
#include "lib/util/grow.h"

enum { VERDICT_UNKNOWN = 0, VERDICT_KEEP = 1, VERDICT_DROP = 2 };

int conv_filter_parse_id(const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end)
        return -1;
    *out = v;
    return 0;
}

/* A name given to --thread or --pid: the exact text, or a shell pattern
 * ("Thread-*"); exact first, so a name with '[' or '*' in it still
 * selects itself. */
static int name_matches(const char *want, const char *name)
{
    return strcmp(want, name) == 0 || fnmatch(want, name, 0) == 0;
}

static int process_matches(const char *want, const trc_process *p)
{
    char names[CONV_PROCESS_NAMES][128];
    int n = p ? conv_process_names(p, names) : 0;
    for (int i = 0; i < n; i++) {
        if (name_matches(want, names[i]))
            return 1;
    }
    return 0;
}

int conv_filter_pid_matches(const conv_filter *sel, const trc_reader *r, int64_t pid)
{
    for (size_t i = 0; i < sel->n_pids; i++) {
        if (sel->pid_values && sel->pid_values[i] == pid)
            return 1;
        if (sel->pid_values && sel->pid_values[i] < 0 &&
            process_matches(sel->pids[i], trc_reader_process_by_pid(r, pid)))
            return 1;
    }
    return 0;
}

/* Whether process `pid` passes --pid.  The verdict of the last pid asked
 * about is kept: GPU events ask once per event, and name patterns cost a
 * lookup and a parse of the command line. */
static int pid_ok(conv_filter *sel, const trc_reader *r, int64_t pid)
{
    if (!sel->n_pids)
        return 1;
    if (sel->cached_pid_keep && sel->cached_pid == pid)
        return sel->cached_pid_keep == VERDICT_KEEP;
    int keep = conv_filter_pid_matches(sel, r, pid);
    if (keep)
        sel->seen_pid = 1; /* GPU work or counters of a process without threads count too */
    sel->cached_pid = pid;
    sel->cached_pid_keep = keep ? VERDICT_KEEP : VERDICT_DROP;
    return keep;
}

static int thread_matches(const conv_filter *sel, const trc_thread *t)
{
    if (!sel->n_threads)
        return 1;
    for (size_t i = 0; i < sel->n_threads; i++) {
        const char *want = sel->threads[i];
        int64_t tid;
        if (name_matches(want, t->name ? t->name : ""))
            return 1;
        if (conv_filter_parse_id(want, &tid) == 0 && tid == t->tid)
            return 1;
    }
    return 0;
}

/* Definitions, like the events the selection keeps, tell whether it
 * matches anything at all (conv_filter_unmatched), under the names
 * they had when defined: a thread renamed later still counts under its
 * first name. */
static void note_definition(conv_filter *sel, trc_reader *r, const trc_event *ev)
{
    if (ev->type == TRC_EV_PROCESS) {
        /* a name pattern may judge the process differently now */
        sel->cached_pid_keep = 0;
        if (sel->n_thread_verdict)
            memset(sel->thread_verdict, VERDICT_UNKNOWN, sel->n_thread_verdict);
        (void)pid_ok(sel, r, ev->u.process->pid); /* notes a match */
    } else if (ev->type == TRC_EV_THREAD) {
        const trc_thread *t = ev->u.thread;
        if (t->id < sel->n_thread_verdict)
            sel->thread_verdict[t->id] = VERDICT_UNKNOWN;
        if (pid_ok(sel, r, t->pid) && thread_matches(sel, t))
            sel->seen_thread = 1;
    }
}

/* Whether samples of thread id `id` pass --pid/--thread.  The verdict is
 * cached per thread id (the check is per sample) and forgotten when the
 * thread is renamed. */
static int thread_ok(conv_filter *sel, trc_reader *r, uint32_t id)
{
    if (!sel->n_pids && !sel->n_threads)
        return 1;
    if (id < sel->n_thread_verdict && sel->thread_verdict[id] != VERDICT_UNKNOWN)
        return sel->thread_verdict[id] == VERDICT_KEEP;
    const trc_thread *t = trc_reader_thread(r, id);
    int keep = t ? pid_ok(sel, r, t->pid) && thread_matches(sel, t) : 0;
    if (keep)
        sel->seen_thread = 1;
    /* New rows are 0, "unknown". */
    if (trcu_grow((void **)&sel->thread_verdict, &sel->n_thread_verdict, id, 1) != TRC_OK)
        return keep; /* no cache: still correct, only slower */
    sel->thread_verdict[id] = keep ? VERDICT_KEEP : VERDICT_DROP;
    return keep;
}

static int64_t window_end(const conv_filter *sel)
{
    return sel->to_ns < 0 ? INT64_MAX : sel->to_ns;
}

/* An interval [start, end] (absolute) overlaps the window. */
static int interval_ok(const conv_filter *sel, int64_t start, int64_t end)
{
    if (!sel->has_from && !sel->has_to)
        return 1;
    /* 128 bits: hostile times must not overflow */
    __int128 s = (__int128)start - sel->trace_start_ns, e = (__int128)end - sel->trace_start_ns;
    if (e < s)
        e = s;
    return e >= sel->from_ns && s < window_end(sel);
}

/* Clip a (possibly folded) sample to the window.  Sample i of n sits at
 * t0 + floor(i * span / (n - 1)).  Returns the kept index range. */
static int clip_sample(const conv_filter *sel, const trc_sample *s, uint64_t *i0,
                       uint64_t *i1)
{
    uint64_t n = s->count ? s->count : 1;
    __int128 t0 = (__int128)s->time_ns - sel->trace_start_ns;
    int64_t from = sel->from_ns, to = window_end(sel);
    *i0 = 0;
    *i1 = n - 1;
    if (n == 1 || s->span_ns == 0) {
        return t0 >= from && t0 < to;
    }
    __int128 span = (__int128)s->span_ns, m = (__int128)(n - 1);
    if (t0 < from) {
        /* smallest i with i*span >= (from - t0)*m */
        __int128 need = (__int128)(from - t0) * m;
        __int128 i = (need + span - 1) / span;
        if (i > (__int128)(n - 1))
            return 0;
        *i0 = (uint64_t)i;
    }
    if (to != INT64_MAX) {
        if (t0 >= to)
            return 0;
        /* largest i with i*span < (to - t0)*m */
        __int128 lim = (__int128)(to - t0) * m;
        __int128 i = (lim - 1) / span;
        if (i < (__int128)(n - 1))
            *i1 = (uint64_t)i;
    }
    return *i0 <= *i1;
}

static int64_t sample_time(const trc_sample *s, uint64_t i)
{
    if (i == 0 || s->count <= 1)
        return s->time_ns;
    return (int64_t)((uint64_t)s->time_ns + (uint64_t)((__int128)s->span_ns * i / (s->count - 1)));
}

const trc_event *conv_filter_event(conv_filter *sel, trc_reader *r, const trc_event *ev,
                                   trc_event *scratch)
{
    if (ev->type == TRC_EV_SEGMENT && !sel->have_start) {
        sel->trace_start_ns = ev->u.segment->start_ns;
        sel->have_start = 1;
    }
    if (ev->type == TRC_EV_PROCESS || ev->type == TRC_EV_THREAD)
        note_definition(sel, r, ev);

    switch (ev->type) {
    case TRC_EV_SAMPLE: {
        const trc_sample *s = &ev->u.sample;
        if (!sel->idle && !(s->flags & TRC_SAMPLE_ON_CPU))
            return NULL;
        if (sel->gil && (s->flags & (TRC_SAMPLE_GIL_KNOWN | TRC_SAMPLE_HOLDS_GIL)) !=
                            (TRC_SAMPLE_GIL_KNOWN | TRC_SAMPLE_HOLDS_GIL))
            return NULL;
        if (!thread_ok(sel, r, s->thread))
            return NULL;
        if (!sel->has_from && !sel->has_to)
            return ev;
        uint64_t i0, i1;
        if (!clip_sample(sel, s, &i0, &i1))
            return NULL;
        uint64_t n = s->count ? s->count : 1;
        if (i0 == 0 && i1 == n - 1)
            return ev;
        *scratch = *ev;
        scratch->u.sample.time_ns = sample_time(s, i0);
        scratch->u.sample.count = (uint32_t)(i1 - i0 + 1);
        scratch->u.sample.span_ns = (uint64_t)sample_time(s, i1) - (uint64_t)sample_time(s, i0);
        return scratch;
    }
    case TRC_EV_GPU_KERNEL:
        return pid_ok(sel, r, ev->u.kernel.where.pid) &&
                       interval_ok(sel, ev->u.kernel.start_ns, ev->u.kernel.end_ns)
                   ? ev : NULL;
    case TRC_EV_GPU_MEMCPY:
        return pid_ok(sel, r, ev->u.memcpy.where.pid) &&
                       interval_ok(sel, ev->u.memcpy.start_ns, ev->u.memcpy.end_ns)
                   ? ev : NULL;
    case TRC_EV_GPU_MEMSET:
        return pid_ok(sel, r, ev->u.memset.where.pid) &&
                       interval_ok(sel, ev->u.memset.start_ns, ev->u.memset.end_ns)
                   ? ev : NULL;
    case TRC_EV_GPU_SYNC:
        return pid_ok(sel, r, ev->u.sync.where.pid) &&
                       interval_ok(sel, ev->u.sync.start_ns, ev->u.sync.end_ns)
                   ? ev : NULL;
    case TRC_EV_API_CALL:
        return thread_ok(sel, r, ev->u.api.thread) &&
                       interval_ok(sel, ev->u.api.start_ns, ev->u.api.end_ns)
                   ? ev : NULL;
    case TRC_EV_MARKER: {
        const trc_marker *m = &ev->u.marker;
        int who = m->thread ? thread_ok(sel, r, m->thread) : pid_ok(sel, r, m->pid);
        return who && interval_ok(sel, m->start_ns, m->end_ns) ? ev : NULL;
    }
    case TRC_EV_COUNTER: {
        const trc_counter_def *c = trc_reader_counter(r, ev->u.counter.counter);
        int who = !c || c->pid < 0 || pid_ok(sel, r, c->pid);
        return who && interval_ok(sel, ev->u.counter.time_ns, ev->u.counter.time_ns) ? ev
                                                                                     : NULL;
    }
    default:
        return ev;
    }
}

int conv_filter_keep(conv_filter *sel, trc_reader *r, const trc_event *ev)
{
    trc_event scratch;
    return conv_filter_event(sel, r, ev, &scratch) != NULL;
}

int conv_filter_thread(conv_filter *sel, trc_reader *r, uint32_t thread)
{
    return thread_ok(sel, r, thread);
}

void conv_filter_cleanup(conv_filter *sel)
{
    trc_free(sel->thread_verdict);
    sel->thread_verdict = NULL;
    sel->n_thread_verdict = 0;
    sel->have_start = 0;
    sel->cached_pid_keep = 0;
    sel->seen_pid = sel->seen_thread = 0;
}
