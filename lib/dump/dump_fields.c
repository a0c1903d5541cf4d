/*
 * lib/dump/dump_fields.c — print the fields of one decoded record body
 * for the trc-dump listing, in the order and with the names of the field
 * tables of spec §7.1–§7.20.  Times are shown as seconds (absolute trace
 * clock), durations in ns, strings quoted and escaped.
 */
#include "lib/dump/dump.h"
#include "lib/dump/dump_int.h"

#include <inttypes.h>
#include <string.h>

#include "lib/util/alloc.h"
#include "lib/util/grow.h"
#include "format/limits.h"

void dump_strtab_reset(dump_strtab *t)
{
    size_t i;
    for (i = 0; i < t->cap; i++) {
        trc_free(t->s[i]);
        t->s[i] = NULL;
    }
}

void dump_strtab_cleanup(dump_strtab *t)
{
    dump_strtab_reset(t);
    trc_free(t->s);
    trc_free(t->len);
    memset(t, 0, sizeof *t);
}

trc_status dump_strtab_put(dump_strtab *t, uint64_t id, const char *p, size_t len)
{
    size_t keep = len < DUMP_STR_KEEP ? len : DUMP_STR_KEEP;

    /* The listing keeps names only for ids a reader would accept: the
     * spec's gap rule (at most 65536 past what is defined) also bounds the
     * table, so a hostile id cannot make it allocate hundreds of MiB. */
    if (id == 0 || id > TRC_MAX_IDS || id >= (uint64_t)t->cap + 65536)
        return TRC_ERR_LIMIT;
    if (id >= t->cap) {
        /* Two columns of one capacity: both grow from t->cap to the same
         * size, and t->cap moves only once both have (a column that grew
         * alone keeps NULL / 0 rows past t->cap). */
        size_t cap_s = t->cap, cap_len = t->cap;
        if (trcu_grow((void **)&t->s, &cap_s, (size_t)id, sizeof *t->s) != TRC_OK ||
            trcu_grow((void **)&t->len, &cap_len, (size_t)id, sizeof *t->len) != TRC_OK)
            return TRC_ERR_NOMEM;
        t->cap = cap_s;
    }
    trc_free(t->s[id]);
    t->s[id] = trc_strndup(p, keep);
    if (!t->s[id])
        return TRC_ERR_NOMEM;
    t->len[id] = (uint32_t)len;
    return TRC_OK;
}

static void f_u(FILE *out, const char *k, uint64_t v)
{
    fprintf(out, " %s=%" PRIu64, k, v);
}

static void f_s(FILE *out, const char *k, int64_t v)
{
    fprintf(out, " %s=%" PRId64, k, v);
}

static void f_x(FILE *out, const char *k, uint64_t v)
{
    fprintf(out, " %s=0x%" PRIx64, k, v);
}

static void f_time(FILE *out, const char *k, int64_t v)
{
    fprintf(out, " %s=", k);
    dump_time(out, v);
}

/* A `dur` field, shown as the duration it encodes. */
static void f_dur(FILE *out, const char *k, int64_t start, int64_t end)
{
    fprintf(out, " %s=%" PRIu64 "ns", k, (uint64_t)end - (uint64_t)start);
}

static void f_str(FILE *out, const char *k, trcf_str s)
{
    fprintf(out, " %s=", k);
    dump_quote(out, s.p, s.len, DUMP_STR_KEEP);
}

static void f_sref(FILE *out, const char *k, uint64_t id, const dump_strtab *t)
{
    fprintf(out, " %s=#%" PRIu64, k, id);
    if (id == 0)
        fputs("\"\"", out);
    else if (id < t->cap && t->s[id])
        dump_quote(out, t->s[id], t->len[id], DUMP_STR_KEEP);
    else
        fputs("(undefined)", out);
}

static void f_where(FILE *out, const trcf_gpu_where *w)
{
    f_s(out, "pid", w->pid);
    f_u(out, "device", w->device);
    f_u(out, "context", w->context);
    f_u(out, "stream", w->stream);
    f_u(out, "correlation", w->correlation);
    f_time(out, "start", w->start);
    f_dur(out, "dur", w->start, w->end);
}

static void f_seg_header(FILE *out, const trcf_seg_header *h)
{
    trcf_cur c;
    trcf_str k, v;
    uint64_t i;

    f_u(out, "major", h->major);
    f_u(out, "minor", h->minor);
    f_u(out, "clock", h->clock);
    f_time(out, "start", h->start_ns);
    f_time(out, "wall", h->wall_ns);
    f_u(out, "period_ns", h->period_ns);
    f_str(out, "recorder", h->recorder);
    f_str(out, "host", h->host);
    f_str(out, "command", h->command_line);
    f_u(out, "n_meta", h->n_meta);
    trcf_meta_begin(h, &c);
    for (i = 0; i < h->n_meta; i++) {
        trcf_meta_next(&c, &k, &v);
        fputc(' ', out);
        dump_quote(out, k.p, k.len, DUMP_STR_KEEP);
        fputc('=', out);
        dump_quote(out, v.p, v.len, DUMP_STR_KEEP);
    }
}

static void f_sample(FILE *out, const trcf_sample *s)
{
    f_time(out, "time", s->time);
    f_u(out, "thread", s->thread);
    f_u(out, "stack", s->stack);
    f_x(out, "flags", s->flags);
    if (s->flags & TRCF_SAMPLE_HAS_WEIGHT)
        f_u(out, "weight_ns", s->weight);
    if (s->flags & TRCF_SAMPLE_REPEAT) {
        f_u(out, "count", s->count);
        f_u(out, "span_ns", s->span);
    }
}

void dump_fields(FILE *out, uint64_t type, const trcf_body *b, const dump_strtab *t)
{
    switch (type) {
    case TRCF_SEGMENT_HEADER:
        f_seg_header(out, &b->seg);
        break;
    case TRCF_STRING:
        f_u(out, "id", b->string.id);
        f_str(out, "value", b->string.s);
        break;
    case TRCF_FRAME:
        f_u(out, "id", b->frame.id);
        f_u(out, "kind", b->frame.kind);
        f_sref(out, "function", b->frame.function, t);
        f_sref(out, "file", b->frame.file, t);
        f_u(out, "line", b->frame.line);
        f_u(out, "first_line", b->frame.first_line);
        break;
    case TRCF_STACK:
        f_u(out, "id", b->stack.id);
        f_u(out, "parent", b->stack.parent);
        f_u(out, "frame", b->stack.frame);
        break;
    case TRCF_PROCESS:
        f_s(out, "pid", b->process.pid);
        f_s(out, "ppid", b->process.ppid);
        f_sref(out, "executable", b->process.executable, t);
        f_sref(out, "interpreter", b->process.interpreter, t);
        f_sref(out, "command", b->process.command_line, t);
        f_time(out, "start", b->process.start_ns);
        f_s(out, "rank", b->process.rank);
        f_sref(out, "label", b->process.label, t);
        f_sref(out, "layout", b->process.layout, t);
        break;
    case TRCF_THREAD:
        f_u(out, "id", b->thread.id);
        f_s(out, "pid", b->thread.pid);
        f_s(out, "tid", b->thread.tid);
        f_sref(out, "name", b->thread.name, t);
        break;
    case TRCF_SAMPLE:
        f_sample(out, &b->sample);
        break;
    case TRCF_COUNTER_DEF:
        f_u(out, "id", b->counter_def.id);
        f_sref(out, "name", b->counter_def.name, t);
        f_sref(out, "unit", b->counter_def.unit, t);
        f_s(out, "pid", b->counter_def.pid);
        f_s(out, "device", b->counter_def.device);
        break;
    case TRCF_COUNTER:
        f_u(out, "counter", b->counter.counter);
        f_time(out, "time", b->counter.time);
        fprintf(out, " value=%.17g", b->counter.value);
        break;
    case TRCF_GPU_DEVICE: {
        int i;
        f_u(out, "device", b->gpu_device.device);
        f_sref(out, "name", b->gpu_device.name, t);
        fputs(" uuid=", out);
        for (i = 0; i < 16; i++)
            fprintf(out, "%02x", b->gpu_device.uuid[i]);
        f_u(out, "sm_count", b->gpu_device.sm_count);
        f_u(out, "memory_bytes", b->gpu_device.memory_bytes);
        fprintf(out, " cc=%" PRIu64 ".%" PRIu64, b->gpu_device.cc_major, b->gpu_device.cc_minor);
        break;
    }
    case TRCF_GPU_KERNEL:
        f_where(out, &b->kernel.w);
        f_sref(out, "name", b->kernel.name, t);
        fprintf(out, " grid=%" PRIu64 "x%" PRIu64 "x%" PRIu64 " block=%" PRIu64 "x%" PRIu64
                     "x%" PRIu64, b->kernel.grid[0], b->kernel.grid[1], b->kernel.grid[2],
                b->kernel.block[0], b->kernel.block[1], b->kernel.block[2]);
        f_u(out, "registers", b->kernel.registers);
        f_u(out, "static_smem", b->kernel.static_smem);
        f_u(out, "dynamic_smem", b->kernel.dynamic_smem);
        f_u(out, "graph", b->kernel.graph);
        f_u(out, "graph_node", b->kernel.graph_node);
        break;
    case TRCF_GPU_MEMCPY:
        f_where(out, &b->memcpy.w);
        f_u(out, "bytes", b->memcpy.bytes);
        f_u(out, "copy_kind", b->memcpy.copy_kind);
        f_u(out, "src_kind", b->memcpy.src_kind);
        f_u(out, "dst_kind", b->memcpy.dst_kind);
        f_u(out, "dst_device", b->memcpy.dst_device);
        break;
    case TRCF_GPU_MEMSET:
        f_where(out, &b->memset.w);
        f_u(out, "bytes", b->memset.bytes);
        f_u(out, "value", b->memset.value);
        f_u(out, "mem_kind", b->memset.mem_kind);
        break;
    case TRCF_GPU_SYNC:
        f_where(out, &b->sync.w);
        f_u(out, "sync_kind", b->sync.sync_kind);
        break;
    case TRCF_API_CALL:
        f_u(out, "thread", b->api.thread);
        f_time(out, "start", b->api.start);
        f_dur(out, "dur", b->api.start, b->api.end);
        f_u(out, "domain", b->api.domain);
        f_sref(out, "name", b->api.name, t);
        f_u(out, "correlation", b->api.correlation);
        f_u(out, "stack", b->api.stack);
        f_s(out, "result", b->api.result);
        f_x(out, "flags", b->api.flags);
        f_u(out, "capture", b->api.capture);
        f_u(out, "graph", b->api.graph);
        f_u(out, "graph_exec", b->api.graph_exec);
        break;
    case TRCF_MARKER:
        f_u(out, "kind", b->marker.kind);
        f_u(out, "thread", b->marker.thread);
        f_s(out, "pid", b->marker.pid);
        f_time(out, "start", b->marker.start);
        f_dur(out, "dur", b->marker.start, b->marker.end);
        f_sref(out, "name", b->marker.name, t);
        f_sref(out, "domain", b->marker.domain, t);
        f_x(out, "color", b->marker.color);
        f_u(out, "id", b->marker.id);
        break;
    case TRCF_CLOCK_SYNC:
        f_u(out, "domain", b->clock_sync.domain);
        f_s(out, "device", b->clock_sync.device);
        f_time(out, "trace", b->clock_sync.time);
        f_s(out, "other_ns", b->clock_sync.other_ns);
        break;
    case TRCF_LOSS:
        f_u(out, "kind", b->loss.kind);
        f_u(out, "count", b->loss.count);
        f_s(out, "pid", b->loss.pid);
        f_u(out, "thread", b->loss.thread);
        f_time(out, "start", b->loss.start);
        f_dur(out, "dur", b->loss.start, b->loss.end);
        f_sref(out, "detail", b->loss.detail, t);
        break;
    case TRCF_PROCESS_EXIT:
        f_s(out, "pid", b->process_exit.pid);
        f_time(out, "time", b->process_exit.time);
        f_s(out, "exit_code", b->process_exit.exit_code);
        f_u(out, "signal", b->process_exit.signal);
        break;
    case TRCF_SEGMENT_END:
        f_time(out, "end", b->segment_end.end);
        f_u(out, "samples", b->segment_end.samples);
        f_u(out, "threads", b->segment_end.threads);
        f_u(out, "processes", b->segment_end.processes);
        f_u(out, "gpu_activities", b->segment_end.gpu_activities);
        f_u(out, "api_calls", b->segment_end.api_calls);
        f_u(out, "lost_samples", b->segment_end.lost_samples);
        f_u(out, "lost_gpu_records", b->segment_end.lost_gpu_records);
        break;
    case TRCF_GPU_CONTEXT:
        f_s(out, "pid", b->gpu_context.pid);
        f_u(out, "device", b->gpu_context.device);
        f_u(out, "context", b->gpu_context.context);
        break;
    case TRCF_GPU_STREAM:
        f_s(out, "pid", b->gpu_stream.pid);
        f_u(out, "device", b->gpu_stream.device);
        f_u(out, "context", b->gpu_stream.context);
        f_u(out, "stream", b->gpu_stream.stream);
        f_s(out, "priority", b->gpu_stream.priority);
        f_x(out, "flags", b->gpu_stream.flags);
        f_sref(out, "name", b->gpu_stream.name, t);
        break;
    default:
        break;
    }
}
