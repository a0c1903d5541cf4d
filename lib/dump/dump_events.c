/*
 * lib/dump/dump_events.c — `trc-dump --events`: one line per event as the
 * public reader yields it (include/trc/trc.h), with ids resolved: a stack
 * is shown as its frames, root first.  This is what every converter sees,
 * so the line format doubles as the machine-readable `expect:` lines of
 * the worked examples in spec/trc-format.md §11 (checked by
 * tests/unit/spec/test_spec_examples.c).
 *
 * Line format: the event name, then " key=value" pairs; times as seconds
 * with 9 decimals, strings quoted with dump_quote, stacks as
 * "fn@file:line;fn@file:line" (or "-" for the empty stack).
 */
#include "lib/dump/dump.h"
#include "lib/procname.h"

#include <inttypes.h>
#include <string.h>

#define STACK_SHOW_MAX 64   /* frames shown before "..." */

static void k_u(FILE *out, const char *k, uint64_t v)
{
    fprintf(out, " %s=%" PRIu64, k, v);
}

static void k_s(FILE *out, const char *k, int64_t v)
{
    fprintf(out, " %s=%" PRId64, k, v);
}

static void k_t(FILE *out, const char *k, int64_t v)
{
    fprintf(out, " %s=", k);
    dump_time(out, v);
}

static void k_q(FILE *out, const char *k, const char *s)
{
    fprintf(out, " %s=", k);
    if (!s)
        s = "";
    dump_quote(out, s, strlen(s), 200);
}

static void k_frame(FILE *out, const trc_frame *f)
{
    dump_quote(out, f->function, strlen(f->function), 200);
    if (f->file && *f->file) {
        fputc('@', out);
        dump_quote(out, f->file, strlen(f->file), 200);
    }
    if (f->line)
        fprintf(out, ":%" PRIu32, f->line);
}

/* " stack=..." root first.  Walks the parent chain into a small array. */
static void k_stack(FILE *out, const trc_reader *r, uint32_t id)
{
    uint32_t chain[STACK_SHOW_MAX];
    size_t n = 0, i;
    int more = 0;
    const trc_stack *s = trc_reader_stack(r, id);

    fputs(" stack=", out);
    if (!s) {
        fprintf(out, "#%" PRIu32 "(unknown)", id);
        return;
    }
    if (s->depth == 0) {
        fputc('-', out);
        return;
    }
    /* Keep the leaf-most STACK_SHOW_MAX frames; show "..." for the rest. */
    while (s && s->depth > 0) {
        if (n == STACK_SHOW_MAX) {
            more = 1;
            break;
        }
        chain[n++] = s->frame;
        s = trc_reader_stack(r, s->parent);
    }
    if (more)
        fputs("...;", out);
    for (i = n; i-- > 0;) {
        const trc_frame *f = trc_reader_frame(r, chain[i]);
        if (f)
            k_frame(out, f);
        else
            fprintf(out, "#%" PRIu32, chain[i]);
        if (i)
            fputc(';', out);
    }
}

static void k_thread(FILE *out, const trc_reader *r, uint32_t id)
{
    const trc_thread *t = trc_reader_thread(r, id);
    if (id && t)
        fprintf(out, " thread=%" PRId64 "/%" PRId64, t->pid, t->tid);
    else
        k_u(out, "thread", id);
}

static void k_where(FILE *out, const trc_gpu_where *w, int64_t start, int64_t end)
{
    k_s(out, "pid", w->pid);
    k_u(out, "device", w->device);
    k_u(out, "context", w->context);
    k_u(out, "stream", w->stream);
    k_u(out, "correlation", w->correlation);
    k_t(out, "start", start);
    k_t(out, "end", end);
}

static void seg_line(FILE *out, const trc_segment *s)
{
    size_t i;
    k_u(out, "index", s->index);
    fprintf(out, " version=%" PRIu32 ".%" PRIu32, s->major, s->minor);
    k_t(out, "start", s->start_ns);
    k_t(out, "wall", s->wall_ns);
    k_u(out, "period_ns", s->period_ns);
    k_q(out, "recorder", s->recorder);
    k_q(out, "host", s->host);
    k_q(out, "command", s->command_line);
    for (i = 0; i < s->n_metadata; i++) {
        fputs(" meta:", out);
        dump_quote(out, s->metadata[i].key, strlen(s->metadata[i].key), 200);
        fputc('=', out);
        dump_quote(out, s->metadata[i].value, strlen(s->metadata[i].value), 200);
    }
}

static void gpu_line(FILE *out, const trc_event *ev)
{
    switch (ev->type) {
    case TRC_EV_GPU_DEVICE: {
        const trc_gpu_device *d = ev->u.gpu_device;
        int i;
        k_u(out, "device", d->device);
        k_q(out, "name", d->name);
        fputs(" uuid=", out);
        for (i = 0; i < 16; i++)
            fprintf(out, "%02x", d->uuid[i]);
        k_u(out, "sm_count", d->sm_count);
        k_u(out, "memory_bytes", d->memory_bytes);
        fprintf(out, " cc=%" PRIu32 ".%" PRIu32, d->cc_major, d->cc_minor);
        break;
    }
    case TRC_EV_GPU_KERNEL: {
        const trc_gpu_kernel *k = &ev->u.kernel;
        k_where(out, &k->where, k->start_ns, k->end_ns);
        k_q(out, "name", k->name);
        fprintf(out, " grid=%" PRIu32 "x%" PRIu32 "x%" PRIu32 " block=%" PRIu32 "x%" PRIu32
                     "x%" PRIu32, k->grid[0], k->grid[1], k->grid[2], k->block[0], k->block[1],
                k->block[2]);
        k_u(out, "registers", k->registers);
        k_u(out, "static_smem", k->static_smem);
        k_u(out, "dynamic_smem", k->dynamic_smem);
        k_u(out, "graph", k->graph);
        k_u(out, "graph_node", k->graph_node);
        break;
    }
    case TRC_EV_GPU_MEMCPY: {
        const trc_gpu_memcpy *m = &ev->u.memcpy;
        k_where(out, &m->where, m->start_ns, m->end_ns);
        k_u(out, "bytes", m->bytes);
        k_u(out, "copy_kind", m->copy_kind);
        k_u(out, "src_kind", m->src_kind);
        k_u(out, "dst_kind", m->dst_kind);
        k_u(out, "dst_device", m->dst_device);
        break;
    }
    case TRC_EV_GPU_MEMSET: {
        const trc_gpu_memset *m = &ev->u.memset;
        k_where(out, &m->where, m->start_ns, m->end_ns);
        k_u(out, "bytes", m->bytes);
        k_u(out, "value", m->value);
        k_u(out, "mem_kind", m->mem_kind);
        break;
    }
    case TRC_EV_GPU_SYNC:
        k_where(out, &ev->u.sync.where, ev->u.sync.start_ns, ev->u.sync.end_ns);
        k_u(out, "sync_kind", ev->u.sync.sync_kind);
        break;
    case TRC_EV_GPU_CONTEXT: {
        const trc_gpu_context *c = ev->u.gpu_context;
        k_s(out, "pid", c->pid);
        k_u(out, "device", c->device);
        k_u(out, "context", c->context);
        break;
    }
    case TRC_EV_GPU_STREAM: {
        const trc_gpu_stream *s = ev->u.gpu_stream;
        k_s(out, "pid", s->pid);
        k_u(out, "device", s->device);
        k_u(out, "context", s->context);
        k_u(out, "stream", s->stream);
        k_s(out, "priority", s->priority);
        fprintf(out, " flags=0x%" PRIx32, s->flags);
        k_q(out, "name", s->name);
        break;
    }
    default:
        break;
    }
}

static void other_line(FILE *out, const trc_reader *r, const trc_event *ev)
{
    switch (ev->type) {
    case TRC_EV_API_CALL: {
        const trc_api_call *a = &ev->u.api;
        k_thread(out, r, a->thread);
        k_t(out, "start", a->start_ns);
        k_t(out, "end", a->end_ns);
        k_u(out, "domain", a->domain);
        k_q(out, "name", a->name);
        k_u(out, "correlation", a->correlation);
        k_stack(out, r, a->stack);
        k_s(out, "result", a->result);
        fprintf(out, " flags=0x%" PRIx32, a->flags);
        k_u(out, "capture", a->capture_ns);
        k_u(out, "graph", a->graph);
        k_u(out, "graph_exec", a->graph_exec);
        break;
    }
    case TRC_EV_MARKER: {
        const trc_marker *m = &ev->u.marker;
        k_u(out, "kind", m->kind);
        k_thread(out, r, m->thread);
        k_s(out, "pid", m->pid);
        k_t(out, "start", m->start_ns);
        k_t(out, "end", m->end_ns);
        k_q(out, "name", m->name);
        k_q(out, "domain", m->domain);
        fprintf(out, " color=0x%06" PRIx32, m->color);
        k_u(out, "id", m->id);
        break;
    }
    case TRC_EV_COUNTER_DEF: {
        const trc_counter_def *c = ev->u.counter_def;
        k_u(out, "id", c->id);
        k_q(out, "name", c->name);
        k_q(out, "unit", c->unit);
        k_s(out, "pid", c->pid);
        k_s(out, "device", c->device);
        break;
    }
    case TRC_EV_COUNTER: {
        const trc_counter_def *c = trc_reader_counter(r, ev->u.counter.counter);
        if (c)
            k_q(out, "counter", c->name);
        else
            k_u(out, "counter", ev->u.counter.counter);
        k_t(out, "time", ev->u.counter.time_ns);
        fprintf(out, " value=%.17g", ev->u.counter.value);
        break;
    }
    case TRC_EV_CLOCK_SYNC: {
        const trc_clock_sync *c = &ev->u.clock_sync;
        k_u(out, "domain", c->domain);
        k_s(out, "device", c->device);
        k_t(out, "trace", c->trace_ns);
        k_s(out, "other_ns", c->other_ns);
        break;
    }
    case TRC_EV_LOSS: {
        const trc_loss *l = &ev->u.loss;
        fprintf(out, " kind=%s", dump_loss_name(l->kind));
        k_u(out, "count", l->count);
        k_s(out, "pid", l->pid);
        k_thread(out, r, l->thread);
        k_t(out, "start", l->start_ns);
        k_t(out, "end", l->end_ns);
        if (l->from_reader)
            fprintf(out, " offset=0x%" PRIx64, l->offset);
        k_q(out, "detail", l->detail);
        fputs(l->from_reader ? " by=reader" : " by=writer", out);
        break;
    }
    case TRC_EV_PROCESS_EXIT: {
        const trc_process_exit *e = &ev->u.process_exit;
        k_s(out, "pid", e->pid);
        k_t(out, "time", e->time_ns);
        k_s(out, "exit_code", e->exit_code);
        k_s(out, "signal", e->signal);
        break;
    }
    case TRC_EV_SEGMENT_END: {
        const trc_segment_end *e = &ev->u.segment_end;
        k_t(out, "end", e->end_ns);
        k_u(out, "samples", e->samples);
        k_u(out, "threads", e->threads);
        k_u(out, "processes", e->processes);
        k_u(out, "gpu_activities", e->gpu_activities);
        k_u(out, "api_calls", e->api_calls);
        k_u(out, "lost_samples", e->lost_samples);
        k_u(out, "lost_gpu_records", e->lost_gpu_records);
        break;
    }
    default:
        gpu_line(out, ev);
        break;
    }
}

void dump_event_line(FILE *out, const trc_reader *r, const trc_event *ev)
{
    fputs(dump_event_name(ev->type), out);
    switch (ev->type) {
    case TRC_EV_SEGMENT:
        seg_line(out, ev->u.segment);
        break;
    case TRC_EV_PROCESS: {
        const trc_process *p = ev->u.process;
        k_s(out, "pid", p->pid);
        k_s(out, "ppid", p->ppid);
        k_q(out, "executable", p->executable);
        k_q(out, "interpreter", p->interpreter);
        k_q(out, "command", p->command_line);
        k_t(out, "start", p->start_ns);
        k_s(out, "rank", p->rank);
        k_q(out, "label", p->label);
        k_q(out, "layout", p->layout);
        char name[PROCNAME_MAX];
        procname_base(p, name, sizeof name);
        k_q(out, "name", name); /* what the converters call it, before " (pid N)" */
        break;
    }
    case TRC_EV_THREAD: {
        const trc_thread *t = ev->u.thread;
        k_s(out, "pid", t->pid);
        k_s(out, "tid", t->tid);
        k_q(out, "name", t->name);
        break;
    }
    case TRC_EV_SAMPLE: {
        const trc_sample *s = &ev->u.sample;
        k_t(out, "time", s->time_ns);
        k_thread(out, r, s->thread);
        k_stack(out, r, s->stack);
        fprintf(out, " flags=0x%" PRIx32, s->flags);
        k_u(out, "weight_ns", s->weight_ns);
        k_u(out, "count", s->count);
        k_u(out, "span_ns", s->span_ns);
        break;
    }
    default:
        other_line(out, r, ev);
        break;
    }
    fputc('\n', out);
}

int dump_events(trc_reader *r, FILE *out, const dump_opts *o)
{
    const trc_event *ev;
    trc_status st;
    uint64_t events = 0, detected = 0;
    int verdict;

    while ((st = trc_reader_next(r, &ev)) == TRC_OK) {
        events++;
        dump_event_line(out, r, ev);
        if (ev->type == TRC_EV_LOSS && ev->u.loss.from_reader)
            detected++;
    }
    if (st != TRC_ERR_EOF && o->problem)
        o->problem(o->problem_ctx, st == TRC_ERR_NOMEM ? "out of memory" : trc_reader_error(r));
    verdict = dump_status_verdict(st, events > 0);
    if (verdict == DUMP_OK && detected)
        verdict = DUMP_DAMAGED;
    return verdict;
}
