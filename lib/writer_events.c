/*
 * lib/writer_events.c — the writer's event records: samples with repeat
 * folding (spec/DESIGN-NOTES.md record 7, "Writer behaviour"), counters,
 * GPU activities, API calls, markers, clock syncs, losses, process exits
 * (records 9, 11-19).
 *
 * Folding: each thread keeps one pending run of identical samples (same
 * stack, flags and weight, times not going backwards).  A sample that
 * matches extends the run in place: that is the hot path, a compare and
 * two stores, no encoding.  A sample that differs writes the run as one
 * SAMPLE record (REPEAT with count and span when it holds 2+ samples)
 * and starts a new run.  Runs are written when their chunk closes, so a
 * run never spans chunks and its record carries the first sample's time:
 * records of different threads are therefore not in time order within a
 * chunk (the format's signed time deltas allow that).
 */
#include "lib/writer_int.h"

#include <string.h>

#include "format/limits.h"
#include "format/records.h"

#define RUN_MAX 80

trc_status trcw_emit_run(trc_writer *w, uint32_t id)
{
    trcw_thread *t = &w->thread[id];
    trcf_sample s;
    trc_status st;

    if (!t->run_count)
        return TRC_OK;
    s.time = t->run_t0;
    s.thread = id;
    s.stack = t->run_stack;
    s.flags = t->run_flags;
    s.weight = t->run_weight;
    if (s.weight)
        s.flags |= TRCF_SAMPLE_HAS_WEIGHT;
    s.count = t->run_count;
    s.span = (uint64_t)t->run_tlast - (uint64_t)t->run_t0;
    if (s.count > 1)
        s.flags |= TRCF_SAMPLE_REPEAT;
    trcw_time_base(w, s.time);
    st = trcf_encode_sample(&w->payload, &w->tcur, &s);
    t->run_count = 0;
    return st;
}

trc_status trc_writer_sample(trc_writer *w, int64_t time_ns, uint32_t thread, uint32_t stack,
                             uint32_t flags, uint64_t weight_ns)
{
    trcw_thread *t;
    trc_status st;

    if (!w || thread == 0 || thread > w->n_threads || stack > w->n_stacks)
        return TRC_ERR_ARG;
    if (w->err)
        return w->err;
    flags &= TRCF_SAMPLE_PUBLIC_MASK;
    if (weight_ns == w->period_ns)
        weight_ns = 0;
    t = &w->thread[thread];
    if (t->run_count) {
        if (t->run_stack == stack && t->run_flags == flags && t->run_weight == weight_ns &&
            time_ns >= t->run_tlast) {
            t->run_count++;
            t->run_tlast = time_ns;
            w->n_samples++;
            return TRC_OK;
        }
        st = trcw_room(w, RUN_MAX);
        if (st != TRC_OK)
            return st;
        /* trcw_room may have closed the chunk, writing this run. */
        if (t->run_count) {
            st = trcw_emit_run(w, thread);
            if (st != TRC_OK)
                return w->err = st;
        } else {
            w->pending[w->n_pending++] = thread;
        }
    } else {
        w->pending[w->n_pending++] = thread;
    }
    t->run_count = 1;
    t->run_t0 = t->run_tlast = time_ns;
    t->run_stack = stack;
    t->run_flags = flags;
    t->run_weight = weight_ns;
    w->n_samples++;
    return trcw_after(w);
}

trc_status trc_writer_counter(trc_writer *w, uint32_t counter, int64_t time_ns, double value)
{
    trcf_body b;

    if (!w || counter == 0 || counter > w->n_counters)
        return TRC_ERR_ARG;
    b.counter.counter = counter;
    b.counter.time = time_ns;
    b.counter.value = value;
    return trcw_put(w, TRCF_COUNTER, 1, time_ns, &b);
}

static void set_where(trcf_gpu_where *o, const trc_gpu_where *in, int64_t start, int64_t end)
{
    o->pid = in->pid;
    o->device = in->device;
    o->context = in->context;
    o->stream = in->stream;
    o->correlation = in->correlation;
    o->start = start;
    o->end = end;
}

/* Put a GPU activity and count it for SEGMENT_END. */
static trc_status put_gpu(trc_writer *w, unsigned type, int64_t start, const trcf_body *b)
{
    trc_status st = trcw_put(w, type, 1, start, b);
    if (st == TRC_OK)
        w->n_gpu++;
    return st;
}

trc_status trc_writer_gpu_kernel(trc_writer *w, const trc_gpu_kernel *k)
{
    trcf_body b;
    uint32_t name;
    trc_status st;
    int i;

    if (!w || !k || k->end_ns < k->start_ns)
        return TRC_ERR_ARG;
    st = trcw_cstr(w, k->name, &name);
    if (st != TRC_OK)
        return st;
    set_where(&b.kernel.w, &k->where, k->start_ns, k->end_ns);
    b.kernel.name = name;
    for (i = 0; i < 3; i++) {
        b.kernel.grid[i] = k->grid[i];
        b.kernel.block[i] = k->block[i];
    }
    b.kernel.registers = k->registers;
    b.kernel.static_smem = k->static_smem;
    b.kernel.dynamic_smem = k->dynamic_smem;
    b.kernel.graph = k->graph;
    b.kernel.graph_node = k->graph_node;
    return put_gpu(w, TRCF_GPU_KERNEL, k->start_ns, &b);
}

trc_status trc_writer_gpu_memcpy(trc_writer *w, const trc_gpu_memcpy *m)
{
    trcf_body b;

    if (!w || !m)
        return TRC_ERR_ARG;
    set_where(&b.memcpy.w, &m->where, m->start_ns, m->end_ns);
    b.memcpy.bytes = m->bytes;
    b.memcpy.copy_kind = (uint64_t)m->copy_kind;
    b.memcpy.src_kind = (uint64_t)m->src_kind;
    b.memcpy.dst_kind = (uint64_t)m->dst_kind;
    b.memcpy.dst_device = m->dst_device;
    return put_gpu(w, TRCF_GPU_MEMCPY, m->start_ns, &b);
}

trc_status trc_writer_gpu_memset(trc_writer *w, const trc_gpu_memset *m)
{
    trcf_body b;

    if (!w || !m)
        return TRC_ERR_ARG;
    set_where(&b.memset.w, &m->where, m->start_ns, m->end_ns);
    b.memset.bytes = m->bytes;
    b.memset.value = m->value;
    b.memset.mem_kind = (uint64_t)m->mem_kind;
    return put_gpu(w, TRCF_GPU_MEMSET, m->start_ns, &b);
}

trc_status trc_writer_gpu_sync(trc_writer *w, const trc_gpu_sync *s)
{
    trcf_body b;

    if (!w || !s)
        return TRC_ERR_ARG;
    set_where(&b.sync.w, &s->where, s->start_ns, s->end_ns);
    b.sync.sync_kind = (uint64_t)s->sync_kind;
    return put_gpu(w, TRCF_GPU_SYNC, s->start_ns, &b);
}

trc_status trc_writer_api_call(trc_writer *w, const trc_api_call *a)
{
    trcf_body b;
    uint32_t name;
    trc_status st;

    if (!w || !a || a->thread > w->n_threads || a->stack > w->n_stacks || a->end_ns < a->start_ns)
        return TRC_ERR_ARG;
    st = trcw_cstr(w, a->name, &name);
    if (st != TRC_OK)
        return st;
    b.api.thread = a->thread;
    b.api.start = a->start_ns;
    b.api.end = a->end_ns;
    b.api.domain = (uint64_t)a->domain;
    b.api.name = name;
    b.api.correlation = a->correlation;
    b.api.stack = a->stack;
    b.api.result = a->result;
    b.api.flags = a->flags;
    b.api.capture = a->capture_ns;
    b.api.graph = a->graph;
    b.api.graph_exec = a->graph_exec;
    st = trcw_put(w, TRCF_API_CALL, 1, a->start_ns, &b);
    if (st == TRC_OK)
        w->n_api++;
    return st;
}

trc_status trc_writer_marker(trc_writer *w, const trc_marker *m)
{
    trcf_body b;
    uint32_t name, domain;
    trc_status st;

    if (!w || !m || m->thread > w->n_threads || m->end_ns < m->start_ns)
        return TRC_ERR_ARG;
    st = trcw_cstr(w, m->name, &name);
    if (st == TRC_OK)
        st = trcw_cstr(w, m->domain, &domain);
    if (st != TRC_OK)
        return st;
    b.marker.kind = (uint64_t)m->kind;
    b.marker.thread = m->thread;
    b.marker.pid = m->pid;
    b.marker.start = m->start_ns;
    b.marker.end = m->end_ns;
    b.marker.name = name;
    b.marker.domain = domain;
    b.marker.color = m->color;
    b.marker.id = m->id;
    return trcw_put(w, TRCF_MARKER, 1, m->start_ns, &b);
}

trc_status trc_writer_clock_sync(trc_writer *w, const trc_clock_sync *c)
{
    trcf_body b;

    if (!w || !c)
        return TRC_ERR_ARG;
    b.clock_sync.domain = (uint64_t)c->domain;
    b.clock_sync.device = c->device;
    b.clock_sync.time = c->trace_ns;
    b.clock_sync.other_ns = c->other_ns;
    return trcw_put(w, TRCF_CLOCK_SYNC, 1, c->trace_ns, &b);
}

trc_status trc_writer_loss(trc_writer *w, const trc_loss *l)
{
    trcf_body b;
    uint32_t detail;
    trc_status st;

    if (!w || !l || l->thread > w->n_threads || l->end_ns < l->start_ns)
        return TRC_ERR_ARG;
    st = trcw_cstr(w, l->detail, &detail);
    if (st != TRC_OK)
        return st;
    b.loss.kind = (uint64_t)l->kind;
    b.loss.count = l->count;
    b.loss.pid = l->pid;
    b.loss.thread = l->thread;
    b.loss.start = l->start_ns;
    b.loss.end = l->end_ns;
    b.loss.detail = detail;
    st = trcw_put(w, TRCF_LOSS, 1, l->start_ns, &b);
    if (st != TRC_OK)
        return st;
    if (l->kind == TRC_LOSS_SAMPLES_MISSED || l->kind == TRC_LOSS_SAMPLES_INVALID)
        w->lost_samples += l->count;
    else if (l->kind == TRC_LOSS_GPU_DROPPED)
        w->lost_gpu += l->count;
    return TRC_OK;
}

trc_status trc_writer_process_exit(trc_writer *w, const trc_process_exit *e)
{
    trcf_body b;

    if (!w || !e)
        return TRC_ERR_ARG;
    b.process_exit.pid = e->pid;
    b.process_exit.time = e->time_ns;
    b.process_exit.exit_code = e->exit_code;
    b.process_exit.signal = (uint64_t)(uint32_t)e->signal;
    return trcw_put(w, TRCF_PROCESS_EXIT, 1, e->time_ns, &b);
}
