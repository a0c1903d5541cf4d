/*
 * lib/export/chrome.c — Chrome Trace Event JSON exporter (see chrome.h;
 * format facts in FORMATS.md §2).
 *
 * Per thread we keep the open stack: open[i] is the view stack of depth
 * i+1 that is open, with the time it opened.  A sample whose view stack
 * differs closes the open frames below the common prefix (outermost
 * first, so equal (ts, dur) pairs keep parent-before-child order after a
 * stable sort by ts) and opens the new ones.
 */
#include "lib/export/chrome.h"

#include <math.h>
#include <string.h>

#include "format/alloc.h"
#include "lib/export/cpuview.h"
#include "lib/export/json_out.h"

typedef struct cthread {
    uint32_t thread;      /* reader thread id */
    int64_t pid, tid;
    struct openf {
        uint32_t stack;   /* view stack of depth i+1 */
        int64_t ns;       /* when it opened (trace clock) */
    } *open;
    uint32_t depth, cap;
    int64_t last_ns;      /* time of the last sample */
    int64_t end_ns;       /* end of the time the last sample stands for */
    uint64_t last_w;      /* weight of the last sample */
    int64_t base_ns;      /* first slice start: speedscope's zero */
    int has_base;
    char ids[64];         /* "\"pid\":P,\"tid\":T," for its slices */
    size_t ids_len;
} cthread;

/* The constant text of a frame's slices, built on first use: pre is
 * {"ph":"X","name":...,"cat":...,  post is ,"args":{...}} or }. */
typedef struct ftext {
    char *text;           /* pre then post, no NUL */
    size_t pre, post;     /* their lengths */
} ftext;

struct chrome {
    chrome_options opt;
    cpuview *view;
    cthread *threads;     /* in order of first sample */
    uint32_t n_threads, cap_threads;
    uint32_t *by_thread;  /* reader thread id -> index + 1 */
    uint32_t by_thread_cap;
    int64_t *pids;        /* processes with events, in order of first use */
    uint32_t n_pids, cap_pids;
    int started;          /* "{"traceEvents":[" written */
    uint64_t n_events;
    int have_start;
    int64_t start_ns, last_ns;
    char *recorder, *host, *command_line;
    int64_t wall_ns;
    uint64_t period_ns;
    ftext *ftexts;        /* by view frame index */
    uint32_t ftexts_cap;
    char err[200];
};

static trc_status fail(chrome *c, const char *what)
{
    snprintf(c->err, sizeof c->err, "chrome: %s: %s", what, trc_status_str(TRC_ERR_NOMEM));
    return TRC_ERR_NOMEM;
}

static int grow(void *arrp, uint32_t *cap, uint32_t need, size_t sz)
{
    void **arr = arrp;
    uint32_t ncap = *cap ? *cap : 16;
    void *p;

    if (need <= *cap)
        return 0;
    while (ncap < need) {
        if (ncap > UINT32_MAX / 2)
            return -1;
        ncap *= 2;
    }
    p = trc_realloc(*arr, (size_t)ncap * sz);
    if (!p)
        return -1;
    memset((char *)p + (size_t)*cap * sz, 0, (size_t)(ncap - *cap) * sz);
    *arr = p;
    *cap = ncap;
    return 0;
}

chrome *chrome_new(const chrome_options *opts)
{
    chrome *c = trc_calloc(1, sizeof *c);
    if (!c)
        return NULL;
    if (opts)
        c->opt = *opts;
    c->view = cpuview_new(c->opt.lines);
    if (!c->view) {
        trc_free(c);
        return NULL;
    }
    return c;
}

void chrome_free(chrome *c)
{
    if (!c)
        return;
    for (uint32_t i = 0; i < c->n_threads; i++) {
        trc_free(c->threads[i].open);
    }
    trc_free(c->threads);
    trc_free(c->by_thread);
    trc_free(c->pids);
    trc_free(c->recorder);
    trc_free(c->host);
    trc_free(c->command_line);
    for (uint32_t i = 0; i < c->ftexts_cap; i++)
        trc_free(c->ftexts[i].text);
    trc_free(c->ftexts);
    cpuview_free(c->view);
    trc_free(c);
}

const char *chrome_error(const chrome *c)
{
    return c->err;
}

/* Start the next element of traceEvents (header on the first). */
static void next_event(chrome *c, FILE *out)
{
    if (!c->started) {
        jsonw_raw(out, "{\"traceEvents\":[\n");
        c->started = 1;
    } else {
        jsonw_raw(out, ",\n");
    }
    c->n_events++;
}

static void write_ts(chrome *c, FILE *out, int64_t ns)
{
    jsonw_raw(out, "\"ts\":");
    jsonw_us3(out, ns - c->start_ns);
}

static int note_pid(chrome *c, int64_t pid)
{
    for (uint32_t i = c->n_pids; i-- > 0;)
        if (c->pids[i] == pid)
            return 0;
    if (grow(&c->pids, &c->cap_pids, c->n_pids + 1, sizeof *c->pids))
        return -1;
    c->pids[c->n_pids++] = pid;
    return 0;
}

/* dur of a slice [open, close] (trace clock) on thread t.  speedscope
 * computes each end as (ts - base) + dur in doubles; all frames closing at
 * one instant must get the same double, equal to (close - base), or its
 * importer mis-nests them.  The 3-decimal form usually does; when not, the
 * nearest double that does is written in full. */
static void write_dur(chrome *c, FILE *out, const cthread *t, int64_t open, int64_t close)
{
    double ts = (double)(open - c->start_ns) / 1000.0; /* == strtod of the 3-decimal text */
    double end = (double)(close - c->start_ns) / 1000.0;
    double base = (double)(t->base_ns - c->start_ns) / 1000.0;
    double a = ts - base, target = end - base;
    double d = (double)(close - open) / 1000.0;
    double dir = a + d < target ? INFINITY : -INFINITY;

    jsonw_raw(out, ",\"dur\":");
    if (a + d == target) {
        jsonw_us3(out, close - open);
        return;
    }
    for (int i = 0; i < 64 && a + d != target; i++)
        d = nextafter(d, dir);
    if (a + d == target)
        jsonw_double(out, d);
    else
        jsonw_us3(out, close - open); /* cannot happen for sane values */
}

/* The slice text of view frame idx (built on first use); NULL when out
 * of memory. */
static const ftext *frame_text(chrome *c, uint32_t idx)
{
    const cpuview_frame *f = cpuview_frame_at(c->view, idx);
    size_t nf, nfile, cap;
    char *p;
    ftext *ft;

    if (idx >= c->ftexts_cap && grow(&c->ftexts, &c->ftexts_cap, idx + 1, sizeof *c->ftexts))
        return NULL;
    ft = &c->ftexts[idx];
    if (ft->text || !f)
        return ft->text ? ft : NULL;
    nf = strlen(f->function);
    nfile = strlen(f->file);
    cap = 96 + 6 * (nf + nfile); /* escaping grows a byte to at most 6 */
    ft->text = p = trc_malloc(cap);
    if (!p)
        return NULL;
    p += sprintf(p, "{\"ph\":\"X\",\"name\":\"");
    p += jsonw_escape(p, f->function, nf);
    p += sprintf(p, "\",\"cat\":\"%s\",", cpuview_kind_name(f->kind));
    ft->pre = (size_t)(p - ft->text);
    if (f->file[0] || f->line) {
        p += sprintf(p, ",\"args\":{\"file\":\"");
        p += jsonw_escape(p, f->file, nfile);
        p += sprintf(p, "\",\"line\":%u}", (unsigned)f->line);
    }
    *p++ = '}';
    ft->post = (size_t)(p - ft->text) - ft->pre;
    return ft;
}

static trc_status write_slice(chrome *c, FILE *out, const cthread *t, uint32_t vstack,
                              int64_t open, int64_t close)
{
    const ftext *ft;

    if (close <= open)
        return TRC_OK; /* an empty slice shows nothing and would confuse importers */
    ft = frame_text(c, cpuview_stack_frame(c->view, vstack));
    if (!ft)
        return fail(c, "slice text");
    next_event(c, out);
    jsonw_bytes(out, ft->text, ft->pre);
    jsonw_bytes(out, t->ids, t->ids_len);
    write_ts(c, out, open);
    write_dur(c, out, t, open, close);
    jsonw_bytes(out, ft->text + ft->pre, ft->post);
    return TRC_OK;
}

/* Close t's open frames at depths >= keep at time `at`, outermost first. */
static trc_status close_to(chrome *c, FILE *out, cthread *t, uint32_t keep, int64_t at)
{
    for (uint32_t i = keep; i < t->depth; i++)
        if (write_slice(c, out, t, t->open[i].stack, t->open[i].ns, at) != TRC_OK)
            return TRC_ERR_NOMEM;
    if (t->depth > keep)
        t->depth = keep;
    return TRC_OK;
}

static cthread *get_thread(chrome *c, const trc_reader *r, uint32_t thread)
{
    const trc_thread *th;
    cthread *t;

    if (thread < c->by_thread_cap && c->by_thread[thread])
        return &c->threads[c->by_thread[thread] - 1];
    if (thread == UINT32_MAX ||
        grow(&c->by_thread, &c->by_thread_cap, thread + 1, sizeof *c->by_thread) ||
        grow(&c->threads, &c->cap_threads, c->n_threads + 1, sizeof *c->threads))
        return NULL;
    th = trc_reader_thread(r, thread);
    t = &c->threads[c->n_threads];
    memset(t, 0, sizeof *t);
    t->thread = thread;
    t->pid = th ? th->pid : -1;
    t->tid = th ? th->tid : -1;
    memcpy(t->ids, "\"pid\":", 6);
    t->ids_len = 6 + jsonw_fmt_i64(t->ids + 6, t->pid);
    memcpy(t->ids + t->ids_len, ",\"tid\":", 7);
    t->ids_len += 7;
    t->ids_len += jsonw_fmt_i64(t->ids + t->ids_len, t->tid);
    t->ids[t->ids_len++] = ',';
    if (note_pid(c, t->pid))
        return NULL;
    c->by_thread[thread] = ++c->n_threads;
    return t;
}

/* 1 if a frame closing at the transition (open depths >= k) looks the
 * same to speedscope (name and args) as the outermost frame opening
 * there.  speedscope's importer breaks a tie between an end and a begin
 * at one instant by handling the begin first when the two look the same,
 * and so ends the wrong frame; such transitions close 1 ns early. */
static int reopens_same(const chrome *c, const cthread *t, uint32_t k, uint32_t v, uint32_t depth)
{
    const cpuview_frame *nf;

    if (depth <= k || t->depth <= k)
        return 0;
    while (cpuview_stack_depth(c->view, v) > k + 1)
        v = cpuview_stack_parent(c->view, v);
    nf = cpuview_frame_at(c->view, cpuview_stack_frame(c->view, v));
    for (uint32_t i = k; i < t->depth; i++) {
        const cpuview_frame *of =
            cpuview_frame_at(c->view, cpuview_stack_frame(c->view, t->open[i].stack));
        if (of == nf || (of && nf && of->line == nf->line && strcmp(of->function, nf->function) == 0 &&
                         strcmp(of->file, nf->file) == 0))
            return 1;
    }
    return 0;
}

static trc_status on_sample(chrome *c, const trc_reader *r, const trc_sample *s, FILE *out)
{
    int64_t at = s->time_ns, end;
    uint32_t v, a, k, depth;
    cthread *t;

    if (cpuview_sample_stack(c->view, r, s->stack, &v) != TRC_OK)
        return fail(c, "stack table");
    t = get_thread(c, r, s->thread);
    if (!t)
        return fail(c, "thread table");
    end = s->time_ns + (int64_t)s->span_ns + (int64_t)s->weight_ns;
    if (t->last_w) {
        if (at < t->last_ns)
            at = t->last_ns; /* out of order: never close before an open */
        if (at - t->end_ns >= (int64_t)t->last_w &&
            close_to(c, out, t, 0, t->end_ns) != TRC_OK) /* a gap: nothing ran here */
            return TRC_ERR_NOMEM;
    }
    depth = cpuview_stack_depth(c->view, v);
    /* Common prefix: the deepest ancestor of v that is open. */
    a = v;
    while (cpuview_stack_depth(c->view, a) > t->depth)
        a = cpuview_stack_parent(c->view, a);
    while (a && t->open[cpuview_stack_depth(c->view, a) - 1].stack != a)
        a = cpuview_stack_parent(c->view, a);
    k = cpuview_stack_depth(c->view, a);
    if (close_to(c, out, t, k, reopens_same(c, t, k, v, depth) ? at - 1 : at) != TRC_OK)
        return TRC_ERR_NOMEM;
    if (grow(&t->open, &t->cap, depth, sizeof *t->open))
        return fail(c, "open stack");
    for (uint32_t cur = v; cur != a; cur = cpuview_stack_parent(c->view, cur)) {
        uint32_t i = cpuview_stack_depth(c->view, cur) - 1;
        t->open[i].stack = cur;
        t->open[i].ns = at;
    }
    if (depth > k && !t->has_base) {
        t->has_base = 1;
        t->base_ns = at;
    }
    t->depth = depth;
    t->last_ns = at;
    t->end_ns = end > at ? end : at;
    t->last_w = s->weight_ns ? s->weight_ns : 1;
    return TRC_OK;
}

static trc_status on_counter(chrome *c, const trc_reader *r, const trc_counter_value *v,
                             FILE *out)
{
    const trc_counter_def *d = trc_reader_counter(r, v->counter);
    int64_t pid = d && d->pid >= 0 ? d->pid : 0; /* 0: counters of no process */

    if (note_pid(c, pid))
        return fail(c, "process table");
    next_event(c, out);
    jsonw_raw(out, "{\"ph\":\"C\",\"name\":");
    jsonw_str(out, d && d->name[0] ? d->name : "counter");
    jsonw_raw(out, ",\"pid\":");
    jsonw_i64(out, pid);
    jsonw_raw(out, ",\"tid\":0,");
    write_ts(c, out, v->time_ns);
    /* The series key is the unit, so the track says what it counts. */
    jsonw_raw(out, ",\"args\":{");
    jsonw_str(out, d && d->unit[0] ? d->unit : "value");
    jsonw_putc(out, ':');
    jsonw_double(out, v->value);
    jsonw_raw(out, "}}");
    return TRC_OK;
}

static const char *loss_name(trc_loss_kind k)
{
    switch (k) {
    case TRC_LOSS_SAMPLES_MISSED: return "samples missed";
    case TRC_LOSS_SAMPLES_INVALID: return "samples invalid";
    case TRC_LOSS_SAMPLES_LATE: return "samples late";
    case TRC_LOSS_GPU_DROPPED: return "GPU records dropped";
    case TRC_LOSS_CHUNK_DAMAGED: return "chunk damaged";
    case TRC_LOSS_CHUNK_MISSING: return "chunks missing";
    case TRC_LOSS_TRUNCATED: return "input truncated";
    case TRC_LOSS_UNDEFINED_REF: return "undefined references";
    default: return "other loss";
    }
}

static trc_status on_loss(chrome *c, const trc_reader *r, const trc_loss *l, FILE *out)
{
    const trc_thread *th = l->thread ? trc_reader_thread(r, l->thread) : NULL;
    int64_t at = l->start_ns ? l->start_ns : c->last_ns;

    if (l->pid >= 0 && note_pid(c, l->pid))
        return fail(c, "process table");
    next_event(c, out);
    jsonw_raw(out, "{\"ph\":\"i\",\"name\":\"loss: ");
    jsonw_raw(out, loss_name(l->kind));
    jsonw_raw(out, "\",\"cat\":\"loss\",\"s\":");
    if (th) {
        jsonw_raw(out, "\"t\",\"pid\":");
        jsonw_i64(out, th->pid);
        jsonw_raw(out, ",\"tid\":");
        jsonw_i64(out, th->tid);
    } else if (l->pid >= 0) {
        jsonw_raw(out, "\"p\",\"pid\":");
        jsonw_i64(out, l->pid);
        jsonw_raw(out, ",\"tid\":0");
    } else {
        jsonw_raw(out, "\"g\",\"pid\":0,\"tid\":0");
    }
    jsonw_putc(out, ',');
    write_ts(c, out, at);
    jsonw_raw(out, ",\"args\":{\"count\":");
    jsonw_u64(out, l->count);
    if (l->end_ns > l->start_ns && l->start_ns) {
        jsonw_raw(out, ",\"duration_us\":");
        jsonw_us3(out, l->end_ns - l->start_ns);
    }
    if (l->from_reader) {
        jsonw_raw(out, ",\"input_offset\":");
        jsonw_u64(out, l->offset);
    }
    if (l->detail && l->detail[0]) {
        jsonw_raw(out, ",\"detail\":");
        jsonw_str(out, l->detail);
    }
    jsonw_raw(out, "}}");
    return TRC_OK;
}

static trc_status on_proc_exit(chrome *c, const trc_process_exit *e, FILE *out)
{
    if (note_pid(c, e->pid))
        return fail(c, "process table");
    next_event(c, out);
    jsonw_raw(out, "{\"ph\":\"i\",\"name\":\"process exit\",\"cat\":\"process\",\"s\":\"p\",\"pid\":");
    jsonw_i64(out, e->pid);
    jsonw_raw(out, ",\"tid\":0,");
    write_ts(c, out, e->time_ns);
    jsonw_raw(out, e->signal ? ",\"args\":{\"signal\":" : ",\"args\":{\"exit_code\":");
    jsonw_i64(out, e->signal ? e->signal : e->exit_code);
    jsonw_raw(out, "}}");
    return TRC_OK;
}

static trc_status on_segment(chrome *c, const trc_segment *seg)
{
    if (c->have_start)
        return TRC_OK; /* later segments (cat a.trc b.trc) share the first's zero */
    c->have_start = 1;
    c->start_ns = seg->start_ns;
    c->wall_ns = seg->wall_ns;
    c->period_ns = seg->period_ns;
    c->recorder = trc_strdup(seg->recorder ? seg->recorder : "");
    c->host = trc_strdup(seg->host ? seg->host : "");
    c->command_line = trc_strdup(seg->command_line ? seg->command_line : "");
    if (!c->recorder || !c->host || !c->command_line)
        return fail(c, "segment");
    return TRC_OK;
}

/* The time of an event, 0 if it has none worth tracking. */
static int64_t event_time(const trc_event *ev)
{
    switch (ev->type) {
    case TRC_EV_SAMPLE: return ev->u.sample.time_ns + (int64_t)ev->u.sample.span_ns;
    case TRC_EV_COUNTER: return ev->u.counter.time_ns;
    case TRC_EV_PROCESS_EXIT: return ev->u.process_exit.time_ns;
    case TRC_EV_LOSS: return ev->u.loss.end_ns;
    default: return 0;
    }
}

trc_status chrome_event(chrome *c, const trc_reader *r, const trc_event *ev, FILE *out)
{
    int64_t t = event_time(ev);
    trc_status st = TRC_OK;

    if (!c->have_start && t && ev->type != TRC_EV_SEGMENT) {
        c->have_start = 1; /* no segment before data: the first time is zero */
        c->start_ns = t;
    }
    switch (ev->type) {
    case TRC_EV_SEGMENT: st = on_segment(c, ev->u.segment); break;
    case TRC_EV_SAMPLE: st = on_sample(c, r, &ev->u.sample, out); break;
    case TRC_EV_COUNTER: st = on_counter(c, r, &ev->u.counter, out); break;
    case TRC_EV_LOSS: st = on_loss(c, r, &ev->u.loss, out); break;
    case TRC_EV_PROCESS_EXIT: st = on_proc_exit(c, &ev->u.process_exit, out); break;
    default: break;
    }
    if (t > c->last_ns)
        c->last_ns = t;
    return st;
}

static void write_meta(chrome *c, FILE *out, const char *name, int64_t pid, int64_t tid)
{
    next_event(c, out);
    jsonw_raw(out, "{\"ph\":\"M\",\"name\":\"");
    jsonw_raw(out, name);
    jsonw_raw(out, "\",\"pid\":");
    jsonw_i64(out, pid);
    jsonw_raw(out, ",\"tid\":");
    jsonw_i64(out, tid);
    jsonw_raw(out, ",\"args\":{");
}

trc_status chrome_finish(chrome *c, const trc_reader *r, FILE *out)
{
    for (uint32_t i = 0; i < c->n_threads; i++)
        if (close_to(c, out, &c->threads[i], 0, c->threads[i].end_ns) != TRC_OK)
            return TRC_ERR_NOMEM;
    for (uint32_t i = 0; i < c->n_pids; i++) {
        int64_t pid = c->pids[i];
        write_meta(c, out, "process_name", pid, 0);
        jsonw_raw(out, "\"name\":\"");
        if (pid == 0 && !trc_reader_process_by_pid(r, 0))
            jsonw_raw(out, "trace-wide counters");
        else
            cpuview_write_process_label(out, trc_reader_process_by_pid(r, pid), pid, 0);
        jsonw_raw(out, "\"}}");
        write_meta(c, out, "process_sort_index", pid, 0);
        jsonw_raw(out, "\"sort_index\":");
        jsonw_u64(out, i);
        jsonw_raw(out, "}}");
    }
    for (uint32_t i = 0; i < c->n_threads; i++) {
        const cthread *t = &c->threads[i];
        write_meta(c, out, "thread_name", t->pid, t->tid);
        jsonw_raw(out, "\"name\":\"");
        cpuview_write_thread_label(out, trc_reader_thread(r, t->thread), t->tid, 0);
        jsonw_raw(out, "\"}}");
        write_meta(c, out, "thread_sort_index", t->pid, t->tid);
        jsonw_raw(out, "\"sort_index\":");
        jsonw_u64(out, i);
        jsonw_raw(out, "}}");
    }
    if (!c->started)
        jsonw_raw(out, "{\"traceEvents\":[");
    jsonw_raw(out, "\n],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":{\"exporter\":\"trc@");
    jsonw_raw(out, trc_version());
    jsonw_raw(out, "\",\"source\":");
    jsonw_str(out, trc_reader_name(r));
    if (c->recorder) {
        jsonw_raw(out, ",\"recorder\":");
        jsonw_str(out, c->recorder);
        jsonw_raw(out, ",\"host\":");
        jsonw_str(out, c->host);
        jsonw_raw(out, ",\"command_line\":");
        jsonw_str(out, c->command_line);
        jsonw_raw(out, ",\"sample_period_ns\":");
        jsonw_u64(out, c->period_ns);
        jsonw_raw(out, ",\"start_wall_ns\":");
        jsonw_i64(out, c->wall_ns);
    }
    jsonw_raw(out, ",\"trace_start_ns\":");
    jsonw_i64(out, c->start_ns);
    jsonw_raw(out, ",\"time_unit\":\"ts and dur in microseconds from trace_start_ns\"}}\n");
    return TRC_OK;
}
