/*
 * lib/export/chrome/chrome.c — Chrome Trace Event JSON exporter, CPU half (see
 * chrome.h; format facts in docs/design/outputs.md §2): the document, CPU samples as
 * flame slices, counters, losses, process exits and names.  GPU
 * activities, CUDA API calls and markers are chrome_gpu.c's; the text
 * both halves write (events, timestamps, spans) is chrome_writer.c's.
 *
 * Per thread we keep the open stack: open[i] is the view stack of depth
 * i+1 that is open, with the time it opened.  A sample whose view stack
 * differs closes the open frames below the common prefix (outermost
 * first, so equal (ts, dur) pairs keep parent-before-child order after a
 * stable sort by ts) and opens the new ones.
 *
 * Speed: a converted sample costs about one slice (~100 bytes of text),
 * so the slice writer is the hot path: each frame's constant text is
 * built once, numbers are formatted straight into the output buffer
 * (json_out.h), and nothing is allocated per slice.
 */
#include "lib/export/chrome/chrome.h"

#include <string.h>

#include "lib/util/alloc.h"
#include "lib/util/grow.h"
#include "lib/export/chrome/chrome_int.h"
#include "lib/export/common/cpuview.h"
#include "lib/export/common/json_out.h"

typedef struct cthread {
    uint32_t thread;      /* reader thread id */
    int64_t pid, tid;
    struct openf {
        uint32_t stack;   /* view stack of depth i+1 */
        int64_t ns;       /* when it opened (trace clock) */
        double rel;       /* its ts as speedscope reads it, minus base (see chr_fmt_dur) */
    } *open;
    uint32_t depth, cap;
    int64_t last_ns;      /* time of the last sample */
    int64_t end_ns;       /* end of the time the last sample stands for */
    uint64_t last_w;      /* weight of the last sample */
    int64_t base_ns;      /* first slice start: speedscope's zero */
    double base_us;       /* (base_ns - start) / 1000 as a double */
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

chrome *chrome_new(const chrome_options *opts)
{
    chrome *c = trc_calloc(1, sizeof *c);
    if (!c)
        return NULL;
    if (opts)
        c->opt = *opts;
    c->view = cpuview_new(c->opt.lines);
    c->gpu = chr_gpu_new(c->opt.wait_mem);
    if (c->opt.busy.bucket_ns > 0 && (c->busy = exp_gpu_idle_new(&c->opt.busy)) != NULL)
        /* fed activities only: intervals retire as the device's
         * streams move past them, not after the horizon */
        exp_gpu_idle_stream_order(c->busy);
    if (!c->view || !c->gpu || (c->opt.busy.bucket_ns > 0 && !c->busy)) {
        cpuview_free(c->view);
        chr_gpu_free(c->gpu);
        exp_gpu_idle_free(c->busy);
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
    chr_gpu_free(c->gpu);
    exp_gpu_idle_free(c->busy);
    jsonw_free(&c->w); /* unwritten output: the stream may be gone by now */
    trc_free(c);
}

const char *chrome_error(const chrome *c)
{
    return c->err;
}

/* Bind the output buffer to out on first use.  TRC_OK or TRC_ERR_NOMEM. */
static trc_status open_output(chrome *c, FILE *out)
{
    if (c->w.buf)
        return TRC_OK;
    if (jsonw_open(&c->w, out))
        return chr_fail(c, "output buffer");
    return TRC_OK;
}

/* The slice text of view frame idx (built on first use); NULL when out
 * of memory. */
static const ftext *frame_text(chrome *c, uint32_t idx)
{
    const cpuview_frame *f;
    size_t nf, nfile, cap;
    char *p;
    ftext *ft;

    if (idx < c->ftexts_cap && c->ftexts[idx].text)
        return &c->ftexts[idx];
    f = cpuview_frame_at(c->view, idx);
    if (!f || (idx >= c->ftexts_cap &&
               trcu_grow32(&c->ftexts, &c->ftexts_cap, idx, sizeof *c->ftexts)))
        return NULL;
    ft = &c->ftexts[idx];
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

/* The "ts":T,"dur":D text shared by the slices that close_to writes for
 * frames opened at one instant (a sample that opens several frames opens
 * them together, and they often close together). */
typedef struct midtext {
    int64_t open;         /* INT64_MIN = none yet */
    size_t len;
    char text[72];
} midtext;

/* Write the slice of open frame o of t, closing at `close`; end_rel is
 * chr_ts_value(close) - t->base_us. */
static trc_status write_slice(chrome *c, const cthread *t, const struct openf *o,
                              uint32_t frame, int64_t close, double end_rel, midtext *mid)
{
    const ftext *ft;
    size_t need;
    char *p;

    if (close <= o->ns)
        return TRC_OK; /* an empty slice shows nothing and would confuse importers */
    ft = frame_text(c, frame);
    if (!ft)
        return chr_fail(c, "slice text");
    if (mid->open != o->ns) {
        p = mid->text;
        memcpy(p, "\"ts\":", 5);
        p += 5;
        p += jsonw_fmt_us3(p, chr_wsub(o->ns, c->start_ns));
        memcpy(p, ",\"dur\":", 7);
        p += 7;
        p += chr_fmt_dur(p, o->rel, end_rel, o->ns, close);
        mid->len = (size_t)(p - mid->text);
        mid->open = o->ns;
    }
    /* pieces: ",\n", pre, ids, mid, post */
    need = 2 + ft->pre + t->ids_len + mid->len + ft->post;
    if (!c->started || need > JSONW_SPACE_MAX) { /* first event, or a huge name */
        chr_next_event(c);
        jsonw_bytes(&c->w, ft->text, ft->pre);
        jsonw_bytes(&c->w, t->ids, t->ids_len);
        jsonw_bytes(&c->w, mid->text, mid->len);
        jsonw_bytes(&c->w, ft->text + ft->pre, ft->post);
        return TRC_OK;
    }
    c->n_events++;
    p = jsonw_space(&c->w, need);
    p[0] = ',';
    p[1] = '\n';
    p += 2;
    jsonw_copy(p, ft->text, ft->pre);
    p += ft->pre;
    jsonw_copy(p, t->ids, t->ids_len);
    p += t->ids_len;
    jsonw_copy(p, mid->text, mid->len);
    p += mid->len;
    jsonw_copy(p, ft->text + ft->pre, ft->post);
    c->w.p = p + ft->post;
    return TRC_OK;
}

/* Close t's open frames at depths >= keep at time `at`, outermost first. */
static trc_status close_to(chrome *c, cthread *t, uint32_t keep, int64_t at)
{
    const cpuview_stack *vs = cpuview_stacks(c->view);
    double end_rel;
    midtext mid;

    if (keep >= t->depth)
        return TRC_OK;
    end_rel = chr_ts_value(c, at) - t->base_us;
    mid.open = INT64_MIN;
    for (uint32_t i = keep; i < t->depth; i++)
        if (write_slice(c, t, &t->open[i], vs[t->open[i].stack].frame, at, end_rel, &mid) !=
            TRC_OK)
            return TRC_ERR_NOMEM;
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
        trcu_grow32(&c->by_thread, &c->by_thread_cap, thread, sizeof *c->by_thread) ||
        trcu_grow32(&c->threads, &c->cap_threads, c->n_threads, sizeof *c->threads))
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
    if (chr_note_pid(c, t->pid))
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
    const cpuview_stack *vs = cpuview_stacks(c->view);
    uint32_t look;

    if (depth <= k || t->depth <= k)
        return 0;
    while (vs[v].depth > k + 1)
        v = vs[v].parent;
    look = cpuview_frame_at(c->view, vs[v].frame)->look;
    for (uint32_t i = k; i < t->depth; i++)
        if (cpuview_frame_at(c->view, vs[t->open[i].stack].frame)->look == look)
            return 1;
    return 0;
}

static trc_status on_sample(chrome *c, const trc_reader *r, const trc_sample *s)
{
    int64_t at = s->time_ns, end;
    uint32_t v, a, k, depth;
    const cpuview_stack *vs;
    cthread *t;

    if (cpuview_sample_stack(c->view, r, s->stack, &v) != TRC_OK)
        return chr_fail(c, "stack table");
    t = get_thread(c, r, s->thread);
    if (!t)
        return chr_fail(c, "thread table");
    end = (int64_t)((uint64_t)s->time_ns + s->span_ns + s->weight_ns); /* modulo 2^64 */
    if (t->last_w) {
        if (at < t->last_ns)
            at = t->last_ns; /* out of order: never close before an open */
        if (chr_wsub(at, t->end_ns) >= (int64_t)t->last_w &&
            close_to(c, t, 0, t->end_ns) != TRC_OK) /* a gap: nothing ran here */
            return TRC_ERR_NOMEM;
    }
    vs = cpuview_stacks(c->view);
    depth = vs[v].depth;
    /* Common prefix: the deepest ancestor of v that is open. */
    a = v;
    while (vs[a].depth > t->depth)
        a = vs[a].parent;
    while (a && t->open[vs[a].depth - 1].stack != a)
        a = vs[a].parent;
    k = vs[a].depth;
    if (close_to(c, t, k, reopens_same(c, t, k, v, depth) ? at - 1 : at) != TRC_OK)
        return TRC_ERR_NOMEM;
    if (depth && trcu_grow32(&t->open, &t->cap, depth - 1, sizeof *t->open))
        return chr_fail(c, "open stack");
    if (depth > k && !t->has_base) {
        t->has_base = 1;
        t->base_ns = at;
        t->base_us = chr_ts_value(c, at);
    }
    if (depth > k) {
        double rel = chr_ts_value(c, at) - t->base_us;
        for (uint32_t cur = v; cur != a; cur = vs[cur].parent) {
            uint32_t i = vs[cur].depth - 1;
            t->open[i].stack = cur;
            t->open[i].ns = at;
            t->open[i].rel = rel;
        }
    }
    t->depth = depth;
    t->last_ns = at;
    t->end_ns = end > at ? end : at;
    t->last_w = s->weight_ns ? s->weight_ns : 1;
    return TRC_OK;
}

static trc_status on_counter(chrome *c, const trc_reader *r, const trc_counter_value *v)
{
    const trc_counter_def *d = trc_reader_counter(r, v->counter);
    int64_t pid = d && d->pid >= 0 ? d->pid : 0; /* 0: counters of no process */
    jsonw *out = &c->w;

    if (d && d->device >= 0) { /* NVML and the like: a track of the GPU */
        pid = chr_gpu_pid(c, (uint32_t)d->device);
        if (pid < 0)
            return c->err_st;
    } else if (chr_note_pid(c, pid)) {
        return chr_fail(c, "process table");
    }
    chr_next_event(c);
    jsonw_raw(out, "{\"ph\":\"C\",\"name\":");
    jsonw_str(out, d && d->name[0] ? d->name : "counter");
    jsonw_raw(out, ",\"pid\":");
    jsonw_i64(out, pid);
    jsonw_raw(out, ",\"tid\":0,");
    chr_write_ts(c, v->time_ns);
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

static trc_status on_loss(chrome *c, const trc_reader *r, const trc_loss *l)
{
    const trc_thread *th = l->thread ? trc_reader_thread(r, l->thread) : NULL;
    int64_t at = l->start_ns ? l->start_ns : c->last_ns;
    jsonw *out = &c->w;

    if (l->pid >= 0 && chr_note_pid(c, l->pid))
        return chr_fail(c, "process table");
    chr_next_event(c);
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
    chr_write_ts(c, at);
    jsonw_raw(out, ",\"args\":{\"count\":");
    jsonw_u64(out, l->count);
    if (l->end_ns > l->start_ns && l->start_ns) {
        jsonw_raw(out, ",\"duration_us\":");
        jsonw_us3(out, chr_wsub(l->end_ns, l->start_ns));
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

void chrome_gpu_hit(chrome *c, const exp_gpu_hit *h) { exp_gpu_stats_add(&c->lines, h); }

static trc_status on_proc_exit(chrome *c, const trc_process_exit *e)
{
    jsonw *out = &c->w;

    if (chr_note_pid(c, e->pid))
        return chr_fail(c, "process table");
    chr_next_event(c);
    jsonw_raw(out, "{\"ph\":\"i\",\"name\":\"process exit\",\"cat\":\"process\",\"s\":\"p\",\"pid\":");
    jsonw_i64(out, e->pid);
    jsonw_raw(out, ",\"tid\":0,");
    chr_write_ts(c, e->time_ns);
    if (e->signal) {
        jsonw_raw(out, ",\"args\":{\"signal\":");
        jsonw_i64(out, e->signal);
    } else if (e->exit_code == -1) {
        /* spec §7.19: ended, status not learnt (its parent reaped it first) */
        jsonw_raw(out, ",\"args\":{\"exit_code\":\"unknown\"");
    } else {
        jsonw_raw(out, ",\"args\":{\"exit_code\":");
        jsonw_i64(out, e->exit_code);
    }
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
        return chr_fail(c, "segment");
    return TRC_OK;
}

/* The time of an event (its end for intervals), 0 if it has none worth
 * tracking. */
static int64_t event_time(const trc_event *ev)
{
    switch (ev->type) {
    case TRC_EV_SAMPLE: return (int64_t)((uint64_t)ev->u.sample.time_ns + ev->u.sample.span_ns);
    case TRC_EV_COUNTER: return ev->u.counter.time_ns;
    case TRC_EV_PROCESS_EXIT: return ev->u.process_exit.time_ns;
    case TRC_EV_LOSS: return ev->u.loss.end_ns;
    case TRC_EV_GPU_KERNEL: return ev->u.kernel.end_ns;
    case TRC_EV_GPU_MEMCPY: return ev->u.memcpy.end_ns;
    case TRC_EV_GPU_MEMSET: return ev->u.memset.end_ns;
    case TRC_EV_GPU_SYNC: return ev->u.sync.end_ns;
    case TRC_EV_API_CALL: return ev->u.api.end_ns;
    case TRC_EV_MARKER: return ev->u.marker.end_ns;
    default: return 0;
    }
}

/* The start of an interval event, for a trace without a segment. */
static int64_t event_start(const trc_event *ev)
{
    switch (ev->type) {
    case TRC_EV_SAMPLE: return ev->u.sample.time_ns;
    case TRC_EV_GPU_KERNEL: return ev->u.kernel.start_ns;
    case TRC_EV_GPU_MEMCPY: return ev->u.memcpy.start_ns;
    case TRC_EV_GPU_MEMSET: return ev->u.memset.start_ns;
    case TRC_EV_GPU_SYNC: return ev->u.sync.start_ns;
    case TRC_EV_API_CALL: return ev->u.api.start_ns;
    case TRC_EV_MARKER: return ev->u.marker.start_ns;
    default: return event_time(ev);
    }
}

trc_status chrome_event(chrome *c, const trc_reader *r, const trc_event *ev, FILE *out)
{
    int64_t t;
    trc_status st = TRC_OK;

    if (ev->type == TRC_EV_SAMPLE && c->have_start && c->w.buf) { /* the common case */
        st = on_sample(c, r, &ev->u.sample);
        t = (int64_t)((uint64_t)ev->u.sample.time_ns + ev->u.sample.span_ns);
        if (t > c->last_ns)
            c->last_ns = t;
        return st;
    }
    if ((st = open_output(c, out)) != TRC_OK)
        return st;
    if (c->busy && (st = chr_busy_event(c, r, ev)) != TRC_OK)
        return st;
    t = event_time(ev);
    if (!c->have_start && t && ev->type != TRC_EV_SEGMENT) {
        c->have_start = 1; /* no segment before data: the first time is zero */
        c->start_ns = event_start(ev);
    }
    switch (ev->type) {
    case TRC_EV_SEGMENT: st = on_segment(c, ev->u.segment); break;
    case TRC_EV_SAMPLE: st = on_sample(c, r, &ev->u.sample); break;
    case TRC_EV_COUNTER: st = on_counter(c, r, &ev->u.counter); break;
    case TRC_EV_LOSS: st = on_loss(c, r, &ev->u.loss); break;
    case TRC_EV_PROCESS_EXIT: st = on_proc_exit(c, &ev->u.process_exit); break;
    case TRC_EV_GPU_DEVICE:
    case TRC_EV_GPU_KERNEL:
    case TRC_EV_GPU_MEMCPY:
    case TRC_EV_GPU_MEMSET:
    case TRC_EV_GPU_SYNC:
    case TRC_EV_API_CALL:
    case TRC_EV_MARKER: st = chr_gpu_event(c, r, ev); break;
    default: break;
    }
    if (t > c->last_ns)
        c->last_ns = t;
    return st;
}

static trc_status write_end(chrome *c, const trc_reader *r)
{
    jsonw *out = &c->w;
    trc_status st;

    for (uint32_t i = 0; i < c->n_threads; i++)
        if (close_to(c, &c->threads[i], 0, c->threads[i].end_ns) != TRC_OK)
            return TRC_ERR_NOMEM;
    /* their own status: the waiters' temporary file fails with TRC_ERR_IO */
    if ((st = chr_gpu_flush(c, r)) != TRC_OK || (st = chr_busy_write(c, r)) != TRC_OK)
        return st;
    for (uint32_t i = 0; i < c->n_pids; i++) {
        int64_t pid = c->pids[i];
        chr_write_meta(c, "process_name", pid, 0);
        jsonw_raw(out, "\"name\":\"");
        if (pid == 0 && !trc_reader_process_by_pid(r, 0))
            jsonw_raw(out, "trace-wide counters");
        else
            cpuview_write_process_label(out, trc_reader_process_by_pid(r, pid), pid, 0);
        jsonw_raw(out, "\"}}");
        chr_write_meta(c, "process_sort_index", pid, 0);
        jsonw_raw(out, "\"sort_index\":");
        jsonw_u64(out, i);
        jsonw_raw(out, "}}");
    }
    for (uint32_t i = 0; i < c->n_threads; i++) {
        const cthread *t = &c->threads[i];
        chr_write_meta(c, "thread_name", t->pid, t->tid);
        jsonw_raw(out, "\"name\":\"");
        cpuview_write_thread_label(out, trc_reader_thread(r, t->thread), t->tid, 0);
        jsonw_raw(out, "\"}}");
        chr_write_meta(c, "thread_sort_index", t->pid, t->tid);
        jsonw_raw(out, "\"sort_index\":");
        jsonw_u64(out, i);
        jsonw_raw(out, "}}");
    }
    if (chr_gpu_write_meta(c, r) != TRC_OK)
        return TRC_ERR_NOMEM;
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
    if (c->lines.python + c->lines.no_python + c->lines.unknown) {
        char share[EXP_GPU_SHARE_MAX];
        jsonw_raw(out, ",\"gpu_python_lines\":");
        jsonw_str(out, exp_gpu_share_str(&c->lines, share, sizeof share));
    }
    jsonw_raw(out, ",\"trace_start_ns\":");
    jsonw_i64(out, c->start_ns);
    jsonw_raw(out, ",\"time_unit\":\"ts and dur in microseconds from trace_start_ns\"}}\n");
    return TRC_OK;
}

trc_status chrome_finish(chrome *c, const trc_reader *r, FILE *out)
{
    trc_status st = open_output(c, out);

    if (st == TRC_OK)
        st = write_end(c, r);
    if (st == TRC_OK)
        jsonw_close(&c->w); /* flush; write errors stay in ferror(out) */
    return st;
}
