/*
 * format/records.c — decode and encode the record bodies of format 1.4
 * (spec/DESIGN-NOTES.md "Record types"; see format/records.h).  Each
 * pair of functions below follows one row of the table, field by field,
 * so the two directions are easy to check against each other and the
 * spec.
 */
#include "format/records.h"

#include <string.h>

#include "format/limits.h"
#include "format/record.h"

static const char *const type_names[TRCF_TYPE_MAX + 1] = {
    NULL, "SEGMENT_HEADER", "STRING", "FRAME", "STACK", "PROCESS", "THREAD",
    "SAMPLE", "COUNTER_DEF", "COUNTER", "GPU_DEVICE", "GPU_KERNEL", "GPU_MEMCPY",
    "GPU_MEMSET", "GPU_SYNC", "API_CALL", "MARKER", "CLOCK_SYNC", "LOSS",
    "PROCESS_EXIT", "SEGMENT_END", "GPU_CONTEXT", "GPU_STREAM",
};

const char *trcf_type_name(uint64_t type)
{
    return type <= TRCF_TYPE_MAX ? type_names[type] : NULL;
}

/* ---- decoding ---- */

static void dec_where(trcf_cur *c, int64_t *tcur, trcf_gpu_where *w)
{
    w->pid = trcf_cur_sv(c);
    w->device = trcf_cur_uv(c);
    w->context = trcf_cur_uv(c);
    w->stream = trcf_cur_uv(c);
    w->correlation = trcf_cur_uv(c);
    w->start = trcf_cur_time(c, tcur);
    w->end = trcf_cur_dur(c, w->start);
}

static void dec_seg_header(trcf_cur *c, trcf_seg_header *h)
{
    uint64_t i;
    trcf_str k, v;

    h->major = trcf_cur_uv(c);
    h->minor = trcf_cur_uv(c);
    h->clock = trcf_cur_uv(c);
    h->start_ns = trcf_cur_sv(c);
    h->wall_ns = trcf_cur_sv(c);
    h->period_ns = trcf_cur_uv(c);
    trcf_cur_str(c, &h->recorder);
    trcf_cur_str(c, &h->host);
    trcf_cur_str(c, &h->command_line);
    h->n_meta = trcf_cur_uv(c);
    h->kv = NULL;
    if (h->n_meta > TRC_MAX_METADATA) {
        trcf_cur_fail(c, TRC_ERR_LIMIT, "more than 4096 metadata entries");
        h->n_meta = 0;
    }
    h->meta = c->p;
    for (i = 0; i < h->n_meta && trcf_cur_ok(c); i++) {
        trcf_cur_str(c, &k);
        trcf_cur_str(c, &v);
    }
    h->meta_end = c->p;
}

void trcf_meta_begin(const trcf_seg_header *h, trcf_cur *c)
{
    trcf_cur_init(c, h->meta, (size_t)(h->meta_end - h->meta));
}

void trcf_meta_next(trcf_cur *c, trcf_str *key, trcf_str *value)
{
    trcf_cur_str(c, key);
    trcf_cur_str(c, value);
}

trc_status trcf_decode(uint64_t type, const uint8_t *body, size_t len, int64_t *tcur,
                       trcf_body *o, const char **why)
{
    trcf_cur cur, *c = &cur;
    int i;

    trcf_cur_init(c, body, len);
    switch (type) {
    case TRCF_SEGMENT_HEADER:
        dec_seg_header(c, &o->seg);
        break;
    case TRCF_STRING:
        o->string.id = trcf_cur_uv(c);
        trcf_cur_str(c, &o->string.s);
        break;
    case TRCF_FRAME:
        o->frame.id = trcf_cur_uv(c);
        o->frame.kind = trcf_cur_uv(c);
        o->frame.function = trcf_cur_uv(c);
        o->frame.file = trcf_cur_uv(c);
        o->frame.line = trcf_cur_uv(c);
        o->frame.first_line = trcf_cur_uv(c);
        break;
    case TRCF_STACK:
        o->stack.id = trcf_cur_uv(c);
        o->stack.parent = trcf_cur_uv(c);
        o->stack.frame = trcf_cur_uv(c);
        break;
    case TRCF_PROCESS:
        o->process.pid = trcf_cur_sv(c);
        o->process.ppid = trcf_cur_sv(c);
        o->process.executable = trcf_cur_uv(c);
        o->process.interpreter = trcf_cur_uv(c);
        o->process.command_line = trcf_cur_uv(c);
        o->process.start_ns = trcf_cur_time(c, tcur);
        /* trailing fields of 1.1 ([R-REC-11]): absent in a 1.0 body */
        o->process.rank = c->p < c->end ? trcf_cur_sv(c) : -1;
        o->process.label = c->p < c->end ? trcf_cur_uv(c) : 0;
        /* trailing field of 1.2 ([R-PROC-2]): absent in a 1.0 or 1.1 body */
        o->process.layout = c->p < c->end ? trcf_cur_uv(c) : 0;
        break;
    case TRCF_THREAD:
        o->thread.id = trcf_cur_uv(c);
        o->thread.pid = trcf_cur_sv(c);
        o->thread.tid = trcf_cur_sv(c);
        o->thread.name = trcf_cur_uv(c);
        break;
    case TRCF_SAMPLE:
        return trcf_decode_sample(body, len, tcur, &o->sample, why);
    case TRCF_COUNTER_DEF:
        o->counter_def.id = trcf_cur_uv(c);
        o->counter_def.name = trcf_cur_uv(c);
        o->counter_def.unit = trcf_cur_uv(c);
        o->counter_def.pid = trcf_cur_sv(c);
        o->counter_def.device = trcf_cur_sv(c);
        break;
    case TRCF_COUNTER:
        o->counter.counter = trcf_cur_uv(c);
        o->counter.time = trcf_cur_time(c, tcur);
        o->counter.value = trcf_cur_f64(c);
        break;
    case TRCF_GPU_DEVICE: {
        const uint8_t *u;
        o->gpu_device.device = trcf_cur_uv(c);
        o->gpu_device.name = trcf_cur_uv(c);
        u = trcf_cur_bytes(c, 16);
        if (u)
            memcpy(o->gpu_device.uuid, u, 16);
        else
            memset(o->gpu_device.uuid, 0, 16);
        o->gpu_device.sm_count = trcf_cur_uv(c);
        o->gpu_device.memory_bytes = trcf_cur_uv(c);
        o->gpu_device.cc_major = trcf_cur_uv(c);
        o->gpu_device.cc_minor = trcf_cur_uv(c);
        break;
    }
    case TRCF_GPU_KERNEL:
        dec_where(c, tcur, &o->kernel.w);
        o->kernel.name = trcf_cur_uv(c);
        for (i = 0; i < 3; i++)
            o->kernel.grid[i] = trcf_cur_uv(c);
        for (i = 0; i < 3; i++)
            o->kernel.block[i] = trcf_cur_uv(c);
        o->kernel.registers = trcf_cur_uv(c);
        o->kernel.static_smem = trcf_cur_uv(c);
        o->kernel.dynamic_smem = trcf_cur_uv(c);
        /* trailing fields of 1.3 ([R-KERNEL-1]): absent in an older body */
        o->kernel.graph = c->p < c->end ? trcf_cur_uv(c) : 0;
        o->kernel.graph_node = c->p < c->end ? trcf_cur_uv(c) : 0;
        break;
    case TRCF_GPU_MEMCPY:
        dec_where(c, tcur, &o->memcpy.w);
        o->memcpy.bytes = trcf_cur_uv(c);
        o->memcpy.copy_kind = trcf_cur_uv(c);
        o->memcpy.src_kind = trcf_cur_uv(c);
        o->memcpy.dst_kind = trcf_cur_uv(c);
        o->memcpy.dst_device = trcf_cur_uv(c);
        break;
    case TRCF_GPU_MEMSET:
        dec_where(c, tcur, &o->memset.w);
        o->memset.bytes = trcf_cur_uv(c);
        o->memset.value = trcf_cur_uv(c);
        o->memset.mem_kind = trcf_cur_uv(c);
        break;
    case TRCF_GPU_SYNC:
        dec_where(c, tcur, &o->sync.w);
        o->sync.sync_kind = trcf_cur_uv(c);
        break;
    case TRCF_API_CALL:
        o->api.thread = trcf_cur_uv(c);
        o->api.start = trcf_cur_time(c, tcur);
        o->api.end = trcf_cur_dur(c, o->api.start);
        o->api.domain = trcf_cur_uv(c);
        o->api.name = trcf_cur_uv(c);
        o->api.correlation = trcf_cur_uv(c);
        o->api.stack = trcf_cur_uv(c);
        o->api.result = trcf_cur_sv(c);
        o->api.flags = trcf_cur_uv(c);
        /* trailing field of 1.3 ([R-API-1]): absent in an older body */
        o->api.capture = c->p < c->end ? trcf_cur_uv(c) : 0;
        /* trailing fields of 1.4 ([R-API-3]): absent in an older body */
        o->api.graph = c->p < c->end ? trcf_cur_uv(c) : 0;
        o->api.graph_exec = c->p < c->end ? trcf_cur_uv(c) : 0;
        break;
    case TRCF_MARKER:
        o->marker.kind = trcf_cur_uv(c);
        o->marker.thread = trcf_cur_uv(c);
        o->marker.pid = trcf_cur_sv(c);
        o->marker.start = trcf_cur_time(c, tcur);
        o->marker.end = trcf_cur_dur(c, o->marker.start);
        o->marker.name = trcf_cur_uv(c);
        o->marker.domain = trcf_cur_uv(c);
        o->marker.color = trcf_cur_uv(c);
        o->marker.id = trcf_cur_uv(c);
        break;
    case TRCF_CLOCK_SYNC:
        o->clock_sync.domain = trcf_cur_uv(c);
        o->clock_sync.device = trcf_cur_sv(c);
        o->clock_sync.time = trcf_cur_time(c, tcur);
        o->clock_sync.other_ns = trcf_cur_sv(c);
        break;
    case TRCF_LOSS:
        o->loss.kind = trcf_cur_uv(c);
        o->loss.count = trcf_cur_uv(c);
        o->loss.pid = trcf_cur_sv(c);
        o->loss.thread = trcf_cur_uv(c);
        o->loss.start = trcf_cur_time(c, tcur);
        o->loss.end = trcf_cur_dur(c, o->loss.start);
        o->loss.detail = trcf_cur_uv(c);
        break;
    case TRCF_PROCESS_EXIT:
        o->process_exit.pid = trcf_cur_sv(c);
        o->process_exit.time = trcf_cur_time(c, tcur);
        o->process_exit.exit_code = trcf_cur_sv(c);
        o->process_exit.signal = trcf_cur_uv(c);
        break;
    case TRCF_SEGMENT_END:
        o->segment_end.end = trcf_cur_time(c, tcur);
        o->segment_end.samples = trcf_cur_uv(c);
        o->segment_end.threads = trcf_cur_uv(c);
        o->segment_end.processes = trcf_cur_uv(c);
        o->segment_end.gpu_activities = trcf_cur_uv(c);
        o->segment_end.api_calls = trcf_cur_uv(c);
        o->segment_end.lost_samples = trcf_cur_uv(c);
        o->segment_end.lost_gpu_records = trcf_cur_uv(c);
        break;
    case TRCF_GPU_CONTEXT:
        o->gpu_context.pid = trcf_cur_sv(c);
        o->gpu_context.device = trcf_cur_uv(c);
        o->gpu_context.context = trcf_cur_uv(c);
        break;
    case TRCF_GPU_STREAM:
        o->gpu_stream.pid = trcf_cur_sv(c);
        o->gpu_stream.device = trcf_cur_uv(c);
        o->gpu_stream.context = trcf_cur_uv(c);
        o->gpu_stream.stream = trcf_cur_uv(c);
        o->gpu_stream.priority = trcf_cur_sv(c);
        o->gpu_stream.flags = trcf_cur_uv(c);
        o->gpu_stream.name = trcf_cur_uv(c);
        break;
    default:
        *why = "unknown record type";
        return TRC_ERR_ARG;
    }
    if (!trcf_cur_ok(c)) {
        *why = c->why;
        return c->err;
    }
    return TRC_OK;
}

/* ---- encoding ---- */

/* Duration field: end - start, which must not be negative. */
static int dur_of(int64_t start, int64_t end, uint64_t *d)
{
    if (end < start)
        return 0;
    *d = (uint64_t)end - (uint64_t)start;
    return 1;
}

static int str_ok(const trcf_str *s)
{
    return s->len <= TRC_MAX_STRING && !memchr(s->p, 0, s->len);
}

static uint8_t *put_str(uint8_t *p, const trcf_str *s)
{
    p = trcf_put_uv(p, s->len);
    if (s->len)
        memcpy(p, s->p, s->len);
    return p + s->len;
}

static uint8_t *put_where(uint8_t *p, int64_t *tcur, const trcf_gpu_where *w, uint64_t dur)
{
    p = trcf_put_sv(p, w->pid);
    p = trcf_put_uv(p, w->device);
    p = trcf_put_uv(p, w->context);
    p = trcf_put_uv(p, w->stream);
    p = trcf_put_uv(p, w->correlation);
    p = trcf_put_time(p, tcur, w->start);
    return trcf_put_uv(p, dur);
}

/* Worst-case body size of a fixed-layout record: every field a maximal
 * varint, plus 16 for GPU_DEVICE's uuid. */
#define FIXED_MAX (24 * TRCF_UV_MAX + 16)

static trc_status check_seg_header(const trcf_seg_header *h, size_t *max)
{
    size_t n = 16 * TRCF_UV_MAX, i;
    trcf_str s;

    if (!str_ok(&h->recorder) || !str_ok(&h->host) || !str_ok(&h->command_line))
        return TRC_ERR_LIMIT;
    if (h->n_meta > TRC_MAX_METADATA || (h->n_meta && !h->kv))
        return TRC_ERR_LIMIT;
    n += h->recorder.len + h->host.len + h->command_line.len;
    for (i = 0; i < h->n_meta; i++) {
        s.p = h->kv[i].key ? h->kv[i].key : "";
        s.len = strlen(s.p);
        if (s.len > TRC_MAX_STRING)
            return TRC_ERR_LIMIT;
        n += s.len + 2 * TRCF_UV_MAX;
        s.p = h->kv[i].value ? h->kv[i].value : "";
        s.len = strlen(s.p);
        if (s.len > TRC_MAX_STRING)
            return TRC_ERR_LIMIT;
        n += s.len;
    }
    *max = n;
    return TRC_OK;
}

static uint8_t *put_seg_header(uint8_t *p, const trcf_seg_header *h)
{
    size_t i;
    trcf_str s;

    p = trcf_put_uv(p, h->major);
    p = trcf_put_uv(p, h->minor);
    p = trcf_put_uv(p, h->clock);
    p = trcf_put_sv(p, h->start_ns);
    p = trcf_put_sv(p, h->wall_ns);
    p = trcf_put_uv(p, h->period_ns);
    p = put_str(p, &h->recorder);
    p = put_str(p, &h->host);
    p = put_str(p, &h->command_line);
    p = trcf_put_uv(p, h->n_meta);
    for (i = 0; i < h->n_meta; i++) {
        s.p = h->kv[i].key ? h->kv[i].key : "";
        s.len = strlen(s.p);
        p = put_str(p, &s);
        s.p = h->kv[i].value ? h->kv[i].value : "";
        s.len = strlen(s.p);
        p = put_str(p, &s);
    }
    return p;
}

trc_status trcf_encode(trcf_buf *b, uint64_t type, int64_t *tcur, const trcf_body *in)
{
    size_t max = FIXED_MAX, start;
    uint64_t d = 0;
    uint8_t *p;
    trc_status st;
    int i;

    /* Validate before writing anything, so a refused record leaves the
     * buffer and the time cursor as they were. */
    switch (type) {
    case TRCF_SAMPLE:
        return trcf_encode_sample(b, tcur, &in->sample);
    case TRCF_SEGMENT_HEADER:
        st = check_seg_header(&in->seg, &max);
        if (st != TRC_OK)
            return st;
        break;
    case TRCF_STRING:
        if (!str_ok(&in->string.s))
            return in->string.s.len > TRC_MAX_STRING ? TRC_ERR_LIMIT : TRC_ERR_ARG;
        max = 2 * TRCF_UV_MAX + in->string.s.len;
        break;
    case TRCF_GPU_KERNEL: case TRCF_GPU_MEMCPY: case TRCF_GPU_MEMSET: case TRCF_GPU_SYNC:
        /* trcf_gpu_where is the first member of all four */
        if (!dur_of(in->kernel.w.start, in->kernel.w.end, &d))
            return TRC_ERR_ARG;
        break;
    case TRCF_API_CALL:
        if (!dur_of(in->api.start, in->api.end, &d))
            return TRC_ERR_ARG;
        break;
    case TRCF_MARKER:
        if (!dur_of(in->marker.start, in->marker.end, &d))
            return TRC_ERR_ARG;
        break;
    case TRCF_LOSS:
        if (!dur_of(in->loss.start, in->loss.end, &d))
            return TRC_ERR_ARG;
        break;
    default:
        if (type < 1 || type > TRCF_TYPE_MAX)
            return TRC_ERR_ARG;
    }

    start = trcf_rec_begin(b, type, 0, max);
    if (start == (size_t)-1)
        return TRC_ERR_NOMEM;
    p = b->data + b->len;
    switch (type) {
    case TRCF_SEGMENT_HEADER:
        p = put_seg_header(p, &in->seg);
        break;
    case TRCF_STRING:
        p = trcf_put_uv(p, in->string.id);
        p = put_str(p, &in->string.s);
        break;
    case TRCF_FRAME:
        p = trcf_put_uv(p, in->frame.id);
        p = trcf_put_uv(p, in->frame.kind);
        p = trcf_put_uv(p, in->frame.function);
        p = trcf_put_uv(p, in->frame.file);
        p = trcf_put_uv(p, in->frame.line);
        p = trcf_put_uv(p, in->frame.first_line);
        break;
    case TRCF_STACK:
        p = trcf_put_uv(p, in->stack.id);
        p = trcf_put_uv(p, in->stack.parent);
        p = trcf_put_uv(p, in->stack.frame);
        break;
    case TRCF_PROCESS:
        p = trcf_put_sv(p, in->process.pid);
        p = trcf_put_sv(p, in->process.ppid);
        p = trcf_put_uv(p, in->process.executable);
        p = trcf_put_uv(p, in->process.interpreter);
        p = trcf_put_uv(p, in->process.command_line);
        p = trcf_put_time(p, tcur, in->process.start_ns);
        p = trcf_put_sv(p, in->process.rank);
        p = trcf_put_uv(p, in->process.label);
        p = trcf_put_uv(p, in->process.layout);
        break;
    case TRCF_THREAD:
        p = trcf_put_uv(p, in->thread.id);
        p = trcf_put_sv(p, in->thread.pid);
        p = trcf_put_sv(p, in->thread.tid);
        p = trcf_put_uv(p, in->thread.name);
        break;
    case TRCF_COUNTER_DEF:
        p = trcf_put_uv(p, in->counter_def.id);
        p = trcf_put_uv(p, in->counter_def.name);
        p = trcf_put_uv(p, in->counter_def.unit);
        p = trcf_put_sv(p, in->counter_def.pid);
        p = trcf_put_sv(p, in->counter_def.device);
        break;
    case TRCF_COUNTER:
        p = trcf_put_uv(p, in->counter.counter);
        p = trcf_put_time(p, tcur, in->counter.time);
        p = trcf_put_f64(p, in->counter.value);
        break;
    case TRCF_GPU_DEVICE:
        p = trcf_put_uv(p, in->gpu_device.device);
        p = trcf_put_uv(p, in->gpu_device.name);
        memcpy(p, in->gpu_device.uuid, 16);
        p += 16;
        p = trcf_put_uv(p, in->gpu_device.sm_count);
        p = trcf_put_uv(p, in->gpu_device.memory_bytes);
        p = trcf_put_uv(p, in->gpu_device.cc_major);
        p = trcf_put_uv(p, in->gpu_device.cc_minor);
        break;
    case TRCF_GPU_KERNEL:
        p = put_where(p, tcur, &in->kernel.w, d);
        p = trcf_put_uv(p, in->kernel.name);
        for (i = 0; i < 3; i++)
            p = trcf_put_uv(p, in->kernel.grid[i]);
        for (i = 0; i < 3; i++)
            p = trcf_put_uv(p, in->kernel.block[i]);
        p = trcf_put_uv(p, in->kernel.registers);
        p = trcf_put_uv(p, in->kernel.static_smem);
        p = trcf_put_uv(p, in->kernel.dynamic_smem);
        p = trcf_put_uv(p, in->kernel.graph);
        p = trcf_put_uv(p, in->kernel.graph_node);
        break;
    case TRCF_GPU_MEMCPY:
        p = put_where(p, tcur, &in->memcpy.w, d);
        p = trcf_put_uv(p, in->memcpy.bytes);
        p = trcf_put_uv(p, in->memcpy.copy_kind);
        p = trcf_put_uv(p, in->memcpy.src_kind);
        p = trcf_put_uv(p, in->memcpy.dst_kind);
        p = trcf_put_uv(p, in->memcpy.dst_device);
        break;
    case TRCF_GPU_MEMSET:
        p = put_where(p, tcur, &in->memset.w, d);
        p = trcf_put_uv(p, in->memset.bytes);
        p = trcf_put_uv(p, in->memset.value);
        p = trcf_put_uv(p, in->memset.mem_kind);
        break;
    case TRCF_GPU_SYNC:
        p = put_where(p, tcur, &in->sync.w, d);
        p = trcf_put_uv(p, in->sync.sync_kind);
        break;
    case TRCF_API_CALL:
        p = trcf_put_uv(p, in->api.thread);
        p = trcf_put_time(p, tcur, in->api.start);
        p = trcf_put_uv(p, d);
        p = trcf_put_uv(p, in->api.domain);
        p = trcf_put_uv(p, in->api.name);
        p = trcf_put_uv(p, in->api.correlation);
        p = trcf_put_uv(p, in->api.stack);
        p = trcf_put_sv(p, in->api.result);
        p = trcf_put_uv(p, in->api.flags);
        p = trcf_put_uv(p, in->api.capture);
        p = trcf_put_uv(p, in->api.graph);
        p = trcf_put_uv(p, in->api.graph_exec);
        break;
    case TRCF_MARKER:
        p = trcf_put_uv(p, in->marker.kind);
        p = trcf_put_uv(p, in->marker.thread);
        p = trcf_put_sv(p, in->marker.pid);
        p = trcf_put_time(p, tcur, in->marker.start);
        p = trcf_put_uv(p, d);
        p = trcf_put_uv(p, in->marker.name);
        p = trcf_put_uv(p, in->marker.domain);
        p = trcf_put_uv(p, in->marker.color);
        p = trcf_put_uv(p, in->marker.id);
        break;
    case TRCF_CLOCK_SYNC:
        p = trcf_put_uv(p, in->clock_sync.domain);
        p = trcf_put_sv(p, in->clock_sync.device);
        p = trcf_put_time(p, tcur, in->clock_sync.time);
        p = trcf_put_sv(p, in->clock_sync.other_ns);
        break;
    case TRCF_LOSS:
        p = trcf_put_uv(p, in->loss.kind);
        p = trcf_put_uv(p, in->loss.count);
        p = trcf_put_sv(p, in->loss.pid);
        p = trcf_put_uv(p, in->loss.thread);
        p = trcf_put_time(p, tcur, in->loss.start);
        p = trcf_put_uv(p, d);
        p = trcf_put_uv(p, in->loss.detail);
        break;
    case TRCF_PROCESS_EXIT:
        p = trcf_put_sv(p, in->process_exit.pid);
        p = trcf_put_time(p, tcur, in->process_exit.time);
        p = trcf_put_sv(p, in->process_exit.exit_code);
        p = trcf_put_uv(p, in->process_exit.signal);
        break;
    case TRCF_SEGMENT_END:
        p = trcf_put_time(p, tcur, in->segment_end.end);
        p = trcf_put_uv(p, in->segment_end.samples);
        p = trcf_put_uv(p, in->segment_end.threads);
        p = trcf_put_uv(p, in->segment_end.processes);
        p = trcf_put_uv(p, in->segment_end.gpu_activities);
        p = trcf_put_uv(p, in->segment_end.api_calls);
        p = trcf_put_uv(p, in->segment_end.lost_samples);
        p = trcf_put_uv(p, in->segment_end.lost_gpu_records);
        break;
    case TRCF_GPU_CONTEXT:
        p = trcf_put_sv(p, in->gpu_context.pid);
        p = trcf_put_uv(p, in->gpu_context.device);
        p = trcf_put_uv(p, in->gpu_context.context);
        break;
    case TRCF_GPU_STREAM:
        p = trcf_put_sv(p, in->gpu_stream.pid);
        p = trcf_put_uv(p, in->gpu_stream.device);
        p = trcf_put_uv(p, in->gpu_stream.context);
        p = trcf_put_uv(p, in->gpu_stream.stream);
        p = trcf_put_sv(p, in->gpu_stream.priority);
        p = trcf_put_uv(p, in->gpu_stream.flags);
        p = trcf_put_uv(p, in->gpu_stream.name);
        break;
    }
    b->len = (size_t)(p - b->data);
    return trcf_rec_end(b, start);
}
