/*
 * tests/support/trace_builder.c — in-memory trace helpers for unit tests
 * (see trace_builder.h).
 */
#include "tests/support/trace_builder.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/chunk.h"
#include "format/records.h"
#include "format/varint.h"

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) {
        fprintf(stderr, "trace_builder: out of memory\n");
        abort();
    }
    return q;
}

void tb_append(tb_buf *b, const void *p, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n)
            cap *= 2;
        b->p = xrealloc(b->p, cap);
        b->cap = cap;
    }
    if (n)
        memcpy(b->p + b->len, p, n);
    b->len += n;
}

int tb_write(void *ctx, const void *buf, size_t len)
{
    tb_buf *b = ctx;

    if (b->fail_after > 0 && b->writes >= b->fail_after) {
        errno = EPIPE;
        return -1;
    }
    b->writes++;
    tb_append(b, buf, len);
    return 0;
}

void tb_buf_free(tb_buf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

long tb_read(void *ctx, void *buf, size_t len)
{
    tb_src *s = ctx;
    size_t n = s->len - s->pos;

    if (n > len)
        n = len;
    if (s->max_read && n > s->max_read)
        n = s->max_read;
    if (n == 0)
        return 0;
    memcpy(buf, s->p + s->pos, n);
    s->pos += n;
    return (long)n;
}

/* ---- rendering ---- */

static void put(char **p, size_t *left, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void put(char **p, size_t *left, const char *fmt, ...)
{
    va_list ap;
    int k;

    if (*left <= 1)
        return;
    va_start(ap, fmt);
    k = vsnprintf(*p, *left, fmt, ap);
    va_end(ap);
    if (k < 0)
        return;
    if ((size_t)k >= *left)
        k = (int)*left - 1;
    *p += k;
    *left -= (size_t)k;
}

static void render_stack(const trc_reader *r, uint32_t id, char **p, size_t *left)
{
    const trc_stack *s = trc_reader_stack(r, id);
    const trc_frame *f;

    if (!s || s->id == 0) {
        put(p, left, "-");
        return;
    }
    if (s->parent) {
        render_stack(r, s->parent, p, left);
        put(p, left, ";");
    }
    f = trc_reader_frame(r, s->frame);
    if (f)
        put(p, left, "%s@%s:%u/%u/k%d", f->function, f->file, f->line, f->first_line, (int)f->kind);
    else
        put(p, left, "?frame%u", s->frame);
}

static const char *thread_name(const trc_reader *r, uint32_t id, char *buf, size_t n)
{
    const trc_thread *t = trc_reader_thread(r, id);
    if (!t) {
        snprintf(buf, n, "%s", id ? "?" : "none");
        return buf;
    }
    snprintf(buf, n, "%" PRId64 "/%" PRId64, t->pid, t->tid);
    return buf;
}

void tb_render(const trc_reader *r, const trc_event *ev, char *buf, size_t n)
{
    char *p = buf, tn[64];
    size_t left = n, i;

    buf[0] = '\0';
    switch (ev->type) {
    case TRC_EV_SEGMENT: {
        const trc_segment *s = ev->u.segment;
        put(&p, &left, "SEGMENT %u.%u start=%" PRId64 " wall=%" PRId64 " period=%" PRIu64
                       " rec=%s host=%s cmd=%s meta=%zu",
            s->major, s->minor, s->start_ns, s->wall_ns, s->period_ns, s->recorder, s->host,
            s->command_line, s->n_metadata);
        for (i = 0; i < s->n_metadata; i++)
            put(&p, &left, " %s=%s", s->metadata[i].key, s->metadata[i].value);
        break;
    }
    case TRC_EV_PROCESS: {
        const trc_process *q = ev->u.process;
        put(&p, &left, "PROCESS pid=%" PRId64 " ppid=%" PRId64 " exe=%s interp=%s cmd=%s start=%" PRId64,
            q->pid, q->ppid, q->executable, q->interpreter, q->command_line, q->start_ns);
        break;
    }
    case TRC_EV_THREAD:
        put(&p, &left, "THREAD %" PRId64 "/%" PRId64 " name=%s", ev->u.thread->pid,
            ev->u.thread->tid, ev->u.thread->name);
        break;
    case TRC_EV_SAMPLE: {
        const trc_sample *s = &ev->u.sample;
        put(&p, &left, "SAMPLE t=%" PRId64 " thr=%s flags=%u w=%" PRIu64 " n=%u span=%" PRIu64 " ",
            s->time_ns, thread_name(r, s->thread, tn, sizeof tn), s->flags, s->weight_ns, s->count,
            s->span_ns);
        render_stack(r, s->stack, &p, &left);
        break;
    }
    case TRC_EV_GPU_DEVICE: {
        const trc_gpu_device *d = ev->u.gpu_device;
        put(&p, &left, "GPU_DEVICE %u name=%s uuid0=%02x uuid15=%02x sm=%u mem=%" PRIu64 " cc=%u.%u",
            d->device, d->name, d->uuid[0], d->uuid[15], d->sm_count, d->memory_bytes, d->cc_major,
            d->cc_minor);
        break;
    }
    case TRC_EV_GPU_KERNEL: {
        const trc_gpu_kernel *k = &ev->u.kernel;
        put(&p, &left, "KERNEL pid=%" PRId64 " dev=%u ctx=%u str=%u corr=%u %" PRId64 "..%" PRId64
                       " name=%s grid=%u,%u,%u block=%u,%u,%u regs=%u smem=%u/%u",
            k->where.pid, k->where.device, k->where.context, k->where.stream, k->where.correlation,
            k->start_ns, k->end_ns, k->name, k->grid[0], k->grid[1], k->grid[2], k->block[0],
            k->block[1], k->block[2], k->registers, k->static_smem, k->dynamic_smem);
        break;
    }
    case TRC_EV_GPU_MEMCPY: {
        const trc_gpu_memcpy *m = &ev->u.memcpy;
        put(&p, &left, "MEMCPY pid=%" PRId64 " dev=%u %" PRId64 "..%" PRId64 " bytes=%" PRIu64
                       " kind=%d src=%d dst=%d dstdev=%u",
            m->where.pid, m->where.device, m->start_ns, m->end_ns, m->bytes, (int)m->copy_kind,
            (int)m->src_kind, (int)m->dst_kind, m->dst_device);
        break;
    }
    case TRC_EV_GPU_MEMSET: {
        const trc_gpu_memset *m = &ev->u.memset;
        put(&p, &left, "MEMSET pid=%" PRId64 " %" PRId64 "..%" PRId64 " bytes=%" PRIu64 " value=%u kind=%d",
            m->where.pid, m->start_ns, m->end_ns, m->bytes, m->value, (int)m->mem_kind);
        break;
    }
    case TRC_EV_GPU_SYNC: {
        const trc_gpu_sync *s = &ev->u.sync;
        put(&p, &left, "SYNC pid=%" PRId64 " %" PRId64 "..%" PRId64 " kind=%d", s->where.pid,
            s->start_ns, s->end_ns, (int)s->sync_kind);
        break;
    }
    case TRC_EV_API_CALL: {
        const trc_api_call *a = &ev->u.api;
        put(&p, &left, "API thr=%s %" PRId64 "..%" PRId64 " dom=%d name=%s corr=%u res=%d flags=%u stack=",
            thread_name(r, a->thread, tn, sizeof tn), a->start_ns, a->end_ns, (int)a->domain, a->name,
            a->correlation, a->result, a->flags);
        render_stack(r, a->stack, &p, &left);
        break;
    }
    case TRC_EV_MARKER: {
        const trc_marker *m = &ev->u.marker;
        put(&p, &left, "MARKER kind=%d thr=%s pid=%" PRId64 " %" PRId64 "..%" PRId64
                       " name=%s dom=%s color=%06x id=%" PRIu64,
            (int)m->kind, thread_name(r, m->thread, tn, sizeof tn), m->pid, m->start_ns, m->end_ns,
            m->name, m->domain, m->color, m->id);
        break;
    }
    case TRC_EV_COUNTER_DEF: {
        const trc_counter_def *c = ev->u.counter_def;
        put(&p, &left, "COUNTER_DEF %s unit=%s pid=%" PRId64 " dev=%d", c->name, c->unit, c->pid,
            c->device);
        break;
    }
    case TRC_EV_COUNTER: {
        const trc_counter_def *c = trc_reader_counter(r, ev->u.counter.counter);
        put(&p, &left, "COUNTER %s t=%" PRId64 " v=%.17g", c ? c->name : "?", ev->u.counter.time_ns,
            ev->u.counter.value);
        break;
    }
    case TRC_EV_CLOCK_SYNC:
        put(&p, &left, "CLOCK_SYNC dom=%d dev=%d trace=%" PRId64 " other=%" PRId64,
            (int)ev->u.clock_sync.domain, ev->u.clock_sync.device, ev->u.clock_sync.trace_ns,
            ev->u.clock_sync.other_ns);
        break;
    case TRC_EV_LOSS: {
        const trc_loss *l = &ev->u.loss;
        put(&p, &left, "LOSS kind=%d count=%" PRIu64 " pid=%" PRId64 " thr=%s %" PRId64 "..%" PRId64
                       " reader=%d",
            (int)l->kind, l->count, l->pid, thread_name(r, l->thread, tn, sizeof tn), l->start_ns,
            l->end_ns, l->from_reader);
        if (l->from_reader)
            put(&p, &left, " offset=%" PRIu64, l->offset);
        put(&p, &left, " detail=%s", l->detail);
        break;
    }
    case TRC_EV_PROCESS_EXIT:
        put(&p, &left, "EXIT pid=%" PRId64 " t=%" PRId64 " code=%d sig=%d", ev->u.process_exit.pid,
            ev->u.process_exit.time_ns, ev->u.process_exit.exit_code, ev->u.process_exit.signal);
        break;
    case TRC_EV_SEGMENT_END: {
        const trc_segment_end *e = &ev->u.segment_end;
        put(&p, &left, "SEGMENT_END t=%" PRId64 " samples=%" PRIu64 " threads=%" PRIu64
                       " procs=%" PRIu64 " gpu=%" PRIu64 " api=%" PRIu64 " lost=%" PRIu64 "/%" PRIu64,
            e->end_ns, e->samples, e->threads, e->processes, e->gpu_activities, e->api_calls,
            e->lost_samples, e->lost_gpu_records);
        break;
    }
    case TRC_EV_GPU_CONTEXT:
        put(&p, &left, "GPU_CONTEXT pid=%" PRId64 " dev=%u ctx=%u", ev->u.gpu_context->pid,
            ev->u.gpu_context->device, ev->u.gpu_context->context);
        break;
    case TRC_EV_GPU_STREAM: {
        const trc_gpu_stream *s = ev->u.gpu_stream;
        put(&p, &left, "GPU_STREAM pid=%" PRId64 " dev=%u ctx=%u str=%u prio=%d flags=%u name=%s",
            s->pid, s->device, s->context, s->stream, s->priority, s->flags, s->name);
        break;
    }
    }
}

trc_status tb_read_mem(const uint8_t *p, size_t len, size_t max_read, tb_result *out)
{
    tb_src src = { p, len, 0, max_read };
    trc_status st;
    trc_reader *r;
    const trc_event *ev;
    char line[1 << 16];
    long guard = 0;

    memset(out, 0, sizeof *out);
    r = trc_reader_open_callback(tb_read, &src, "mem.trc", &st);
    if (!r) {
        out->status = st;
        return st;
    }
    while ((st = trc_reader_next(r, &ev)) == TRC_OK) {
        if (++guard > 10000000) {
            st = TRC_ERR_ARG;
            break;
        }
        tb_render(r, ev, line, sizeof line);
        if (out->n == out->cap) {
            out->cap = out->cap ? out->cap * 2 : 64;
            out->lines = xrealloc(out->lines, out->cap * sizeof *out->lines);
            out->offsets = xrealloc(out->offsets, out->cap * sizeof *out->offsets);
            out->types = xrealloc(out->types, out->cap * sizeof *out->types);
        }
        out->lines[out->n] = strdup(line);
        out->offsets[out->n] = ev->offset;
        out->types[out->n] = (int)ev->type;
        out->n++;
        if (ev->type == TRC_EV_SAMPLE)
            out->samples += ev->u.sample.count;
        if (ev->type == TRC_EV_LOSS && ev->u.loss.from_reader) {
            out->losses++;
            if ((unsigned)ev->u.loss.kind < 16)
                out->loss_count[ev->u.loss.kind] += ev->u.loss.count ? ev->u.loss.count : 1;
        }
    }
    out->status = st;
    snprintf(out->error, sizeof out->error, "%s", trc_reader_error(r));
    trc_reader_get_stats(r, &out->stats);
    out->threads = trc_reader_thread_count(r);
    out->stacks = trc_reader_stack_count(r);
    out->frames = trc_reader_frame_count(r);
    trc_reader_free(r);
    return st;
}

void tb_result_free(tb_result *r)
{
    size_t i;

    for (i = 0; i < r->n; i++)
        free(r->lines[i]);
    free(r->lines);
    free(r->offsets);
    free(r->types);
    memset(r, 0, sizeof *r);
}

size_t tb_result_events(const tb_result *r)
{
    size_t i, n = 0;

    for (i = 0; i < r->n; i++)
        n += strncmp(r->lines[i], "LOSS", 4) != 0;
    return n;
}

/* ---- crafting ---- */

void tb_chunk(tb_buf *out, uint8_t major, uint8_t minor, uint8_t kind, uint8_t flags,
              uint64_t seq, int64_t base, const uint8_t *payload, size_t len, int level)
{
    trcf_deflater d = { 0 };
    trcf_chunk_header h;

    memset(&h, 0, sizeof h);
    h.major = major;
    h.minor = minor;
    h.kind = kind;
    h.seq = seq;
    h.base_time = base;
    if (trcf_chunk_build(&d, level, &h, payload, len) != TRC_OK) {
        fprintf(stderr, "trace_builder: chunk build failed\n");
        abort();
    }
    if (flags) {
        /* Extra flag bits: patch them in and recompute the header CRC. */
        h.flags |= flags;
        trcf_header_encode(&h, d.out.data);
    }
    tb_append(out, d.out.data, d.out.len);
    trcf_deflater_cleanup(&d);
}

void tb_rec(trcf_buf *payload, uint64_t type, int must_understand, const void *body, size_t len)
{
    uint8_t hdr[2 * TRCF_UV_MAX], *p = hdr;

    p = trcf_put_uv(p, type << 1 | (must_understand ? 1u : 0u));
    p = trcf_put_uv(p, len);
    if (trcf_buf_append(payload, hdr, (size_t)(p - hdr)) != TRC_OK ||
        trcf_buf_append(payload, body, len) != TRC_OK)
        abort();
}

void tb_rec_header(trcf_buf *payload, unsigned major, unsigned minor)
{
    trcf_body b;
    int64_t tcur = 0;

    memset(&b, 0, sizeof b);
    b.seg.major = major;
    b.seg.minor = minor;
    b.seg.clock = 1;
    b.seg.start_ns = 1000;
    b.seg.wall_ns = 2000;
    b.seg.period_ns = 1000000;
    b.seg.recorder.p = "crafted";
    b.seg.recorder.len = 7;
    b.seg.host.p = "h";
    b.seg.host.len = 1;
    b.seg.command_line.p = "";
    if (trcf_encode(payload, TRCF_SEGMENT_HEADER, &tcur, &b) != TRC_OK)
        abort();
}

size_t tb_chunks(const uint8_t *p, size_t len, uint64_t *offsets, uint64_t *ends, size_t max)
{
    size_t pos = 0, n = 0;

    while (pos + TRCF_HEADER_SIZE <= len && n < max) {
        uint32_t stored = trcf_get_u32le(p + pos + 8);
        offsets[n] = pos;
        pos += TRCF_HEADER_SIZE + stored;
        ends[n++] = pos;
    }
    return n;
}

/* ---- writing a scenario ---- */

trc_status tb_gen_open(tb_gen *g, int fd, tb_buf *out, const trc_writer_options *o)
{
    g->st = TRC_OK;
    g->w = out ? trc_writer_open_callback(tb_write, out, o, &g->st) : trc_writer_open_fd(fd, o, &g->st);
    if (!g->w && g->st == TRC_OK)
        g->st = TRC_ERR_NOMEM;
    return g->st;
}

void tb_gen_check(tb_gen *g, trc_status st)
{
    if (g->st == TRC_OK)
        g->st = st;
}

uint32_t tb_gen_frame(tb_gen *g, trc_frame_kind kind, const char *fn, const char *file,
                      uint32_t line, uint32_t first_line)
{
    uint32_t id = 0;
    TB_DO(g, trc_writer_frame, kind, fn, file, line, first_line, &id);
    return id;
}

uint32_t tb_gen_stack(tb_gen *g, uint32_t parent, uint32_t frame)
{
    uint32_t id = 0;
    TB_DO(g, trc_writer_stack, parent, frame, &id);
    return id;
}

uint32_t tb_gen_thread(tb_gen *g, int64_t pid, int64_t tid, const char *name)
{
    uint32_t id = 0;
    TB_DO(g, trc_writer_thread, pid, tid, name, &id);
    return id;
}

uint32_t tb_gen_counter_def(tb_gen *g, const char *name, const char *unit, int64_t pid,
                            int32_t device)
{
    uint32_t id = 0;
    TB_DO(g, trc_writer_counter_def, name, unit, pid, device, &id);
    return id;
}

trc_status tb_gen_close(tb_gen *g, int64_t end_ns)
{
    if (g->w) {
        tb_gen_check(g, trc_writer_close(g->w, end_ns));
        g->w = NULL;
    }
    return g->st;
}

/* ---- the standard trace ---- */

trc_status tb_standard_trace(tb_buf *out, int n_samples, uint32_t chunk_bytes, int level)
{
    trc_writer_options o;
    trc_writer *w;
    trc_status st;
    uint32_t thr[3], fr[6], stk[6], cnt;
    trc_kv meta[2] = { { "python", "3.12.1" }, { "mode", "test" } };
    int64_t t = 1000000000;
    int i;

    memset(&o, 0, sizeof o);
    o.recorder = "trace_builder";
    o.host = "testhost";
    o.command_line = "python app.py --flag";
    o.n_metadata = 2;
    o.metadata = meta;
    o.start_ns = t;
    o.wall_ns = 1700000000000000000;
    o.period_ns = 1000000;
    o.chunk_bytes = chunk_bytes;
    o.flush_interval_ns = 50000000;
    o.compression_level = level;
    w = trc_writer_open_callback(tb_write, out, &o, &st);
    if (!w)
        return st;
#define TRY(x)                     \
    do {                           \
        st = (x);                  \
        if (st != TRC_OK)          \
            goto out;              \
    } while (0)
    {
        trc_process p = { 0, 4242, 1, "/usr/bin/python3", "CPython 3.12.1", "python app.py --flag", t, -1, "", "" };
        TRY(trc_writer_process(w, &p));
    }
    TRY(trc_writer_thread(w, 4242, 4242, "MainThread", &thr[0]));
    TRY(trc_writer_thread(w, 4242, 4243, "worker-1", &thr[1]));
    TRY(trc_writer_thread(w, 4242, 4244, "", &thr[2]));
    TRY(trc_writer_frame(w, TRC_FRAME_PYTHON, "<module>", "app.py", 10, 1, &fr[0]));
    TRY(trc_writer_frame(w, TRC_FRAME_PYTHON, "main", "app.py", 20, 18, &fr[1]));
    TRY(trc_writer_frame(w, TRC_FRAME_PYTHON, "compute", "lib/compute.py", 7, 5, &fr[2]));
    TRY(trc_writer_frame(w, TRC_FRAME_PYTHON, "compute", "lib/compute.py", 8, 5, &fr[3]));
    TRY(trc_writer_frame(w, TRC_FRAME_NATIVE, "memcpy", "", 0, 0, &fr[4]));
    TRY(trc_writer_frame(w, TRC_FRAME_OTHER, "<idle>", "", 0, 0, &fr[5]));
    TRY(trc_writer_stack(w, 0, fr[0], &stk[0]));
    TRY(trc_writer_stack(w, stk[0], fr[1], &stk[1]));
    TRY(trc_writer_stack(w, stk[1], fr[2], &stk[2]));
    TRY(trc_writer_stack(w, stk[1], fr[3], &stk[3]));
    TRY(trc_writer_stack(w, stk[3], fr[4], &stk[4]));
    TRY(trc_writer_stack(w, 0, fr[5], &stk[5]));
    TRY(trc_writer_counter_def(w, "rss", "bytes", 4242, -1, &cnt));
    for (i = 0; i < n_samples; i++) {
        int th = i % 3;
        int s = th == 2 ? 5 : (i / 3) % 7 < 4 ? 2 + ((i / 9) % 3) : 1;
        t += th == 0 ? 997000 + (i % 7) * 1000 : 1500;
        TRY(trc_writer_sample(w, t, thr[th], stk[s], th == 2 ? 0 : TRC_SAMPLE_ON_CPU | TRC_SAMPLE_GIL_KNOWN |
                                                             (th == 0 ? TRC_SAMPLE_HOLDS_GIL : 0), 0));
        if (i % 50 == 25)
            TRY(trc_writer_counter(w, cnt, t, 1e6 + i));
        if (i == n_samples / 2)
            TRY(trc_writer_thread(w, 4242, 4243, "worker-renamed", &thr[1]));
        if (i % 97 == 0) {
            trc_gpu_kernel k;
            memset(&k, 0, sizeof k);
            k.where.pid = 4242;
            k.where.device = 0;
            k.where.stream = 7;
            k.where.correlation = (uint32_t)i + 1;
            k.start_ns = t - 500000;
            k.end_ns = t - 400000;
            k.name = "void gemm<float>(int)";
            k.grid[0] = 128;
            k.block[0] = 256;
            TRY(trc_writer_gpu_kernel(w, &k));
        }
        if (i % 10 == 9)
            TRY(trc_writer_tick(w, t));
    }
    {
        trc_marker m = { TRC_MARK_RANGE, 0, 4242, t - 5000000, t, "epoch", "user", 0xff8800, 1 };
        trc_loss l = { .kind = TRC_LOSS_SAMPLES_MISSED, .count = 3, .pid = 4242,
                       .start_ns = t - 2000000, .end_ns = t, .detail = "sampler was late" };
        trc_process_exit e = { 4242, t + 10, 0, 0 };
        TRY(trc_writer_marker(w, &m));
        l.thread = thr[0];
        TRY(trc_writer_loss(w, &l));
        TRY(trc_writer_process_exit(w, &e));
    }
#undef TRY
out:
    if (st != TRC_OK) {
        trc_writer_close(w, t);
        return st;
    }
    return trc_writer_close(w, t + 100);
}
