/*
 * lib/reader_rec.c — records to events (spec/trc-format.md §6, §7, §8.9):
 * maps segment-local ids to the reader's global ids (lib/model.h),
 * enforces the id rules, and fills trc_event.
 *
 * Id rules: a definition's id must be 1..2^24 and at most the highest
 * defined so far + 65536; redefining an id is a rename for THREAD, a
 * no-op when the content, references resolved, is the same for the
 * others, and a corrupt record otherwise ([R-ID-8]).  A record referring
 * to an id its segment never defined is dropped and counted
 * (trcr_undef); a malformed one likewise (trcr_bad); lib/reader.c turns
 * the counts into one loss per chunk.
 */
#include "lib/reader_int.h"

#include <stdio.h>
#include <string.h>

#include "lib/util/alloc.h"
#include "lib/util/grow.h"
#include "format/limits.h"

/* ---- per-chunk drop accounting ---- */

static const char *type_name(uint64_t type, char *buf, size_t n)
{
    const char *s = trcf_type_name(type);
    if (s)
        return s;
    snprintf(buf, n, "type-%llu", (unsigned long long)type);
    return buf;
}

void trcr_bad(trc_reader *r, const trcf_record *rec, const char *why)
{
    char tn[32];

    r->tcur = r->tcur_before;
    if (r->n_bad++ == 0)
        snprintf(r->bad_first, sizeof r->bad_first, "%s record at payload offset 0x%zx: %s",
                 type_name(rec->type, tn, sizeof tn), rec->offset, why ? why : "corrupt");
}

void trcr_undef(trc_reader *r, const trcf_record *rec, const char *what, uint64_t id)
{
    char tn[32];

    if (r->n_undef++ == 0)
        snprintf(r->undef_first, sizeof r->undef_first, "%s %llu in %s record at payload offset 0x%zx",
                 what, (unsigned long long)id, type_name(rec->type, tn, sizeof tn), rec->offset);
}

/* ---- local id maps ---- */

static void idmap_reset(trcr_idmap *m)
{
    if (m->g)
        memset(m->g, 0, (m->highest < m->cap ? m->highest + 1 : m->cap) * sizeof *m->g);
    m->highest = 0;
}

void trcr_reset_segment(trc_reader *r)
{
    idmap_reset(&r->strings);
    idmap_reset(&r->frames);
    idmap_reset(&r->stacks);
    idmap_reset(&r->threads);
    idmap_reset(&r->counters);
}

void trcr_idmaps_free(trc_reader *r)
{
    trc_free(r->strings.g);
    trc_free(r->frames.g);
    trc_free(r->stacks.g);
    trc_free(r->threads.g);
    trc_free(r->counters.g);
}

/* A new definition's id is within the spec's bounds. */
static int id_ok(const trcr_idmap *m, uint64_t id)
{
    return id >= 1 && id <= TRC_MAX_IDS && id <= (uint64_t)m->highest + TRC_MAX_ID_GAP;
}

/* Global id + 1 currently bound to local id, 0 if none. */
static uint32_t idmap_peek(const trcr_idmap *m, uint64_t id)
{
    return id < m->cap ? m->g[id] : 0;
}

static trc_status idmap_set(trcr_idmap *m, uint64_t id, uint32_t gid)
{
    /* New rows are zero: "not bound" (idmap_peek).  Tested here first so
     * that the common case, a row already there, costs no call. */
    if (id >= m->cap && trcu_grow((void **)&m->g, &m->cap, (size_t)id, sizeof *m->g) != TRC_OK)
        return TRC_ERR_NOMEM;
    m->g[id] = gid + 1;
    if (id > m->highest)
        m->highest = (uint32_t)id;
    return TRC_OK;
}

/* Bind a new definition (the id is not bound yet). */
static trc_status define(trcr_idmap *m, uint64_t id, uint32_t gid)
{
    return idmap_set(m, id, gid) == TRC_OK ? TRC_ERR_EOF : TRC_ERR_NOMEM;
}

/* A definition of an id already bound ([R-ID-8]): ignored when `same`
 * (its content, references resolved, equals the first definition's),
 * else a corrupt record.  Checked before anything is added to the model,
 * so a rejected redefinition leaves no trace in it (no event, no id). */
static trc_status redefine(trc_reader *r, const trcf_record *rec, int same)
{
    if (!same)
        trcr_bad(r, rec, "id redefined with different content");
    return TRC_ERR_EOF;
}

/* The first undefined one of n string references (for the message). */
static uint64_t first_undefined(const trc_reader *r, const uint64_t *ids, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (ids[i] && !idmap_peek(&r->strings, ids[i]))
            return ids[i];
    return 0;
}

/* Local reference where 0 means "none/empty" (strings, stacks, optional
 * threads). */
static inline uint32_t map0(const trcr_idmap *m, uint64_t local, int *ok)
{
    return local == 0 ? 0 : trcr_map(m, local, ok);
}

static const char *str(const trc_reader *r, uint32_t gid)
{
    return gid ? r->model.strs[gid] : "";
}

static uint32_t u32(uint64_t v)
{
    return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

/* An enumerated field: values above max are not assigned ([R-ENUM-1]). */
static uint32_t enum_or(uint64_t v, uint32_t max, uint32_t other)
{
    return v <= max ? (uint32_t)v : other;
}

static trc_mem_kind mem_kind(uint64_t v)
{
    return (trc_mem_kind)enum_or(v, TRC_MEM_MANAGED_STATIC, TRC_MEM_UNKNOWN);
}

static int32_t i32(int64_t v)
{
    return v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : (int32_t)v;
}

/* ---- definitions ---- */

static trc_status seg_header(trc_reader *r, const trcf_record *rec, const trcf_seg_header *h,
                             trc_event *ev)
{
    trca_arena *a = &r->model.arena;
    trc_segment *seg;
    trc_kv *kv = NULL;
    trcf_cur c;
    trcf_str k, v;
    uint64_t i;

    seg = trca_alloc(a, sizeof *seg);
    if (!seg)
        return TRC_ERR_NOMEM;
    if (h->n_meta) {
        kv = trca_alloc(a, (size_t)h->n_meta * sizeof *kv);
        if (!kv)
            return TRC_ERR_NOMEM;
    }
    trcf_meta_begin(h, &c);
    for (i = 0; i < h->n_meta; i++) {
        trcf_meta_next(&c, &k, &v);
        kv[i].key = trca_strndup(a, k.p, k.len);
        kv[i].value = trca_strndup(a, v.p, v.len);
        if (!kv[i].key || !kv[i].value)
            return TRC_ERR_NOMEM;
    }
    seg->recorder = trca_strndup(a, h->recorder.p, h->recorder.len);
    seg->host = trca_strndup(a, h->host.p, h->host.len);
    seg->command_line = trca_strndup(a, h->command_line.p, h->command_line.len);
    if (!seg->recorder || !seg->host || !seg->command_line)
        return TRC_ERR_NOMEM;
    seg->index = r->n_segments++;
    seg->major = r->seg_major;      /* the chunk header governs [R-HDR-2] */
    seg->minor = r->seg_minor;
    seg->start_ns = h->start_ns;
    seg->wall_ns = h->wall_ns;
    seg->period_ns = h->period_ns ? h->period_ns : 1000000;
    seg->n_metadata = (size_t)h->n_meta;
    seg->metadata = kv;
    r->period = seg->period_ns;
    r->stats.segments++;
    trcr_time(r, h->start_ns);
    ev->type = TRC_EV_SEGMENT;
    ev->u.segment = seg;
    (void)rec;
    return TRC_OK;
}

static trc_status string_def(trc_reader *r, const trcf_record *rec, const trcf_string_def *d)
{
    uint32_t gid, old;
    trc_status st;

    if (!id_ok(&r->strings, d->id)) {
        trcr_bad(r, rec, "string id out of range");
        return TRC_ERR_EOF;
    }
    old = idmap_peek(&r->strings, d->id);
    if (old) {
        const char *was = str(r, old - 1);
        return redefine(r, rec, strlen(was) == d->s.len && memcmp(was, d->s.p, d->s.len) == 0);
    }
    st = trcm_string(&r->model, d->s.p, d->s.len, &gid);
    if (st != TRC_OK)
        return st;
    return define(&r->strings, d->id, gid);
}

static trc_status frame_def(trc_reader *r, const trcf_record *rec, const trcf_frame_def *d)
{
    uint32_t fn, file, gid, old;
    trc_frame_kind kind;
    int ok = 1;
    trc_status st;

    if (!id_ok(&r->frames, d->id)) {
        trcr_bad(r, rec, "frame id out of range");
        return TRC_ERR_EOF;
    }
    fn = map0(&r->strings, d->function, &ok);
    file = map0(&r->strings, d->file, &ok);
    if (!ok) {
        uint64_t refs[2] = { d->function, d->file };
        trcr_undef(r, rec, "string", first_undefined(r, refs, 2));
        return TRC_ERR_EOF;
    }
    kind = d->kind <= TRC_FRAME_OTHER ? (trc_frame_kind)d->kind : TRC_FRAME_OTHER;
    old = idmap_peek(&r->frames, d->id);
    if (old) {
        const trc_frame *f = r->model.frames[old - 1];
        return redefine(r, rec, f->kind == kind && strcmp(f->function, str(r, fn)) == 0 &&
                                    strcmp(f->file, str(r, file)) == 0 &&
                                    f->line == u32(d->line) && f->first_line == u32(d->first_line));
    }
    st = trcm_frame(&r->model, kind, fn, file, u32(d->line), u32(d->first_line), &gid);
    if (st != TRC_OK)
        return st;
    return define(&r->frames, d->id, gid);
}

static trc_status stack_def(trc_reader *r, const trcf_record *rec, const trcf_stack_def *d)
{
    uint32_t parent, frame, gid, old;
    int ok = 1;
    trc_status st;

    if (!id_ok(&r->stacks, d->id) || d->parent >= d->id) {
        trcr_bad(r, rec, d->parent >= d->id ? "stack parent not below its id" : "stack id out of range");
        return TRC_ERR_EOF;
    }
    parent = map0(&r->stacks, d->parent, &ok);
    if (!ok) {
        trcr_undef(r, rec, "stack", d->parent);
        return TRC_ERR_EOF;
    }
    frame = trcr_map(&r->frames, d->frame, &ok);
    if (!ok) {
        trcr_undef(r, rec, "frame", d->frame);
        return TRC_ERR_EOF;
    }
    old = idmap_peek(&r->stacks, d->id);
    if (old) {
        const trc_stack *k = r->model.stacks[old - 1];
        return redefine(r, rec, k->parent == parent && k->frame == frame);
    }
    st = trcm_stack(&r->model, parent, frame, &gid);
    if (st == TRC_ERR_LIMIT) {
        trcr_bad(r, rec, "stack deeper than 4096 frames");
        return TRC_ERR_EOF;
    }
    if (st != TRC_OK)
        return st;
    return define(&r->stacks, d->id, gid);
}

static trc_status thread_def(trc_reader *r, const trcf_record *rec, const trcf_thread_def *d,
                             trc_event *ev)
{
    uint32_t name, gid;
    int ok = 1, changed;
    trc_status st;

    if (!id_ok(&r->threads, d->id) && !idmap_peek(&r->threads, d->id)) {
        trcr_bad(r, rec, "thread id out of range");
        return TRC_ERR_EOF;
    }
    name = map0(&r->strings, d->name, &ok);
    if (!ok) {
        trcr_undef(r, rec, "string", d->name);
        return TRC_ERR_EOF;
    }
    st = trcm_thread(&r->model, d->pid, d->tid, name, &gid, &changed);
    if (st == TRC_OK)
        st = idmap_set(&r->threads, d->id, gid);    /* redefinition = rename */
    if (st != TRC_OK)
        return st;
    if (!changed)
        return TRC_ERR_EOF;
    ev->type = TRC_EV_THREAD;
    ev->u.thread = r->model.threads[gid];
    return TRC_OK;
}

static trc_status process_def(trc_reader *r, const trcf_record *rec, const trcf_process_def *d,
                              trc_event *ev)
{
    trc_process p;
    const trc_process *out;
    uint32_t exe, interp, cmd, label, layout;
    int ok = 1, changed;
    trc_status st;

    exe = map0(&r->strings, d->executable, &ok);
    interp = map0(&r->strings, d->interpreter, &ok);
    cmd = map0(&r->strings, d->command_line, &ok);
    label = map0(&r->strings, d->label, &ok);
    layout = map0(&r->strings, d->layout, &ok);
    if (!ok) {
        uint64_t refs[5] = { d->executable, d->interpreter, d->command_line, d->label, d->layout };
        trcr_undef(r, rec, "string", first_undefined(r, refs, 5));
        return TRC_ERR_EOF;
    }
    memset(&p, 0, sizeof p);
    p.pid = d->pid;
    p.ppid = d->ppid;
    p.executable = str(r, exe);
    p.interpreter = str(r, interp);
    p.command_line = str(r, cmd);
    p.start_ns = d->start_ns;
    p.rank = d->rank < 0 ? -1 : d->rank;
    p.label = str(r, label);
    p.layout = str(r, layout);
    st = trcm_process(&r->model, &p, &out, &changed);
    if (st != TRC_OK)
        return st;
    if (!changed)
        return TRC_ERR_EOF;
    ev->type = TRC_EV_PROCESS;
    ev->u.process = out;
    return TRC_OK;
}

static trc_status counter_def(trc_reader *r, const trcf_record *rec, const trcf_counter_def *d,
                              trc_event *ev)
{
    uint32_t name, unit, gid, old;
    int ok = 1, is_new;
    trc_status st;

    if (!id_ok(&r->counters, d->id)) {
        trcr_bad(r, rec, "counter id out of range");
        return TRC_ERR_EOF;
    }
    name = map0(&r->strings, d->name, &ok);
    unit = map0(&r->strings, d->unit, &ok);
    if (!ok) {
        uint64_t refs[2] = { d->name, d->unit };
        trcr_undef(r, rec, "string", first_undefined(r, refs, 2));
        return TRC_ERR_EOF;
    }
    old = idmap_peek(&r->counters, d->id);
    if (old) {
        const trc_counter_def *c = r->model.counters[old - 1];
        return redefine(r, rec, strcmp(c->name, str(r, name)) == 0 &&
                                    strcmp(c->unit, str(r, unit)) == 0 && c->pid == d->pid &&
                                    c->device == i32(d->device));
    }
    st = trcm_counter(&r->model, name, unit, d->pid, i32(d->device), &gid, &is_new);
    if (st != TRC_OK)
        return st;
    st = define(&r->counters, d->id, gid);
    if (st != TRC_ERR_EOF || !is_new)
        return st;
    ev->type = TRC_EV_COUNTER_DEF;
    ev->u.counter_def = r->model.counters[gid];
    return TRC_OK;
}

static trc_status device_def(trc_reader *r, const trcf_record *rec, const trcf_gpu_device *d,
                             trc_event *ev)
{
    trc_gpu_device g;
    const trc_gpu_device *out;
    uint32_t name;
    int ok = 1, changed;
    trc_status st;

    if (d->device > UINT32_MAX) {
        trcr_bad(r, rec, "GPU device number out of range");
        return TRC_ERR_EOF;
    }
    name = map0(&r->strings, d->name, &ok);
    if (!ok) {
        trcr_undef(r, rec, "string", d->name);
        return TRC_ERR_EOF;
    }
    memset(&g, 0, sizeof g);
    g.device = (uint32_t)d->device;
    g.name = str(r, name);
    memcpy(g.uuid, d->uuid, 16);
    g.sm_count = u32(d->sm_count);
    g.memory_bytes = d->memory_bytes;
    g.cc_major = u32(d->cc_major);
    g.cc_minor = u32(d->cc_minor);
    st = trcm_device(&r->model, &g, &out, &changed);
    if (st != TRC_OK)
        return st;
    if (!changed)
        return TRC_ERR_EOF;
    ev->type = TRC_EV_GPU_DEVICE;
    ev->u.gpu_device = out;
    return TRC_OK;
}

/* GPU_CONTEXT / GPU_STREAM (spec §7.21, §7.22): descriptions keyed by
 * (pid, device, context[, stream]); an event only when new or changed. */
static trc_status context_def(trc_reader *r, const trcf_gpu_context *d, trc_event *ev)
{
    trc_gpu_context c;
    const trc_gpu_context *out;
    int changed;
    trc_status st;

    memset(&c, 0, sizeof c);
    c.pid = d->pid;
    c.device = u32(d->device);
    c.context = u32(d->context);
    st = trcm_context(&r->model, &c, &out, &changed);
    if (st != TRC_OK)
        return st;
    if (!changed)
        return TRC_ERR_EOF;
    ev->type = TRC_EV_GPU_CONTEXT;
    ev->u.gpu_context = out;
    return TRC_OK;
}

static trc_status stream_def(trc_reader *r, const trcf_record *rec, const trcf_gpu_stream *d,
                             trc_event *ev)
{
    trc_gpu_stream s;
    const trc_gpu_stream *out;
    uint32_t name;
    int ok = 1, changed;
    trc_status st;

    name = map0(&r->strings, d->name, &ok);
    if (!ok) {
        trcr_undef(r, rec, "string", d->name);
        return TRC_ERR_EOF;
    }
    memset(&s, 0, sizeof s);
    s.pid = d->pid;
    s.device = u32(d->device);
    s.context = u32(d->context);
    s.stream = u32(d->stream);
    s.priority = i32(d->priority);
    s.flags = u32(d->flags);
    s.name = str(r, name);
    st = trcm_stream(&r->model, &s, &out, &changed);
    if (st != TRC_OK)
        return st;
    if (!changed)
        return TRC_ERR_EOF;
    ev->type = TRC_EV_GPU_STREAM;
    ev->u.gpu_stream = out;
    return TRC_OK;
}

/* ---- events ---- */

static void where(trc_reader *r, trc_gpu_where *o, int64_t *start, int64_t *end, const trcf_gpu_where *w)
{
    o->pid = w->pid;
    o->device = u32(w->device);
    o->context = u32(w->context);
    o->stream = u32(w->stream);
    o->correlation = u32(w->correlation);
    *start = w->start;
    *end = w->end;
    trcr_time(r, w->start);
    trcr_time(r, w->end);
}

/* A string reference inside an event: 0 = "", undefined = the record is
 * dropped (counted; returns 0). */
static int ev_str(trc_reader *r, const trcf_record *rec, uint64_t local, const char **dst)
{
    int ok = 1;
    uint32_t g = map0(&r->strings, local, &ok);

    if (!ok) {
        trcr_undef(r, rec, "string", local);
        return 0;
    }
    *dst = str(r, g);
    return 1;
}

trc_status trcr_record(trc_reader *r, const trcf_record *rec, trc_event *ev)
{
    trcf_body b;
    const char *why = NULL;
    trc_status st;
    int ok = 1, i;

    /* The missing-header case was reported by the caller (lib/reader.c
     * next_record), which then cleared need_header. */
    if (rec->type == TRCF_SEGMENT_HEADER && !r->need_header) {
        trcr_bad(r, rec, "SEGMENT_HEADER inside a segment");
        return TRC_ERR_EOF;
    }
    st = trcf_decode(rec->type, rec->body, rec->len, &r->tcur, &b, &why);
    if (st != TRC_OK) {
        if (rec->type == TRCF_SEGMENT_HEADER)
            r->need_header = 0;
        trcr_bad(r, rec, why);
        return TRC_ERR_EOF;
    }
    memset(&ev->u, 0, sizeof ev->u);
    switch ((trcf_type)rec->type) {
    case TRCF_SEGMENT_HEADER:
        r->need_header = 0;
        return seg_header(r, rec, &b.seg, ev);
    case TRCF_STRING:
        return string_def(r, rec, &b.string);
    case TRCF_FRAME:
        return frame_def(r, rec, &b.frame);
    case TRCF_STACK:
        return stack_def(r, rec, &b.stack);
    case TRCF_PROCESS:
        return process_def(r, rec, &b.process, ev);
    case TRCF_THREAD:
        return thread_def(r, rec, &b.thread, ev);
    case TRCF_SAMPLE:
        return trcr_sample(r, rec, ev);     /* lib/reader.c decodes SAMPLE itself; kept for completeness */
    case TRCF_COUNTER_DEF:
        return counter_def(r, rec, &b.counter_def, ev);
    case TRCF_COUNTER:
        ev->u.counter.counter = trcr_map(&r->counters, b.counter.counter, &ok);
        if (!ok) {
            trcr_undef(r, rec, "counter", b.counter.counter);
            return TRC_ERR_EOF;
        }
        ev->type = TRC_EV_COUNTER;
        ev->u.counter.time_ns = b.counter.time;
        ev->u.counter.value = b.counter.value;
        trcr_time(r, b.counter.time);
        return TRC_OK;
    case TRCF_GPU_DEVICE:
        return device_def(r, rec, &b.gpu_device, ev);
    case TRCF_GPU_KERNEL: {
        trc_gpu_kernel *k = &ev->u.kernel;
        if (!ev_str(r, rec, b.kernel.name, &k->name))
            return TRC_ERR_EOF;
        where(r, &k->where, &k->start_ns, &k->end_ns, &b.kernel.w);
        for (i = 0; i < 3; i++) {
            k->grid[i] = u32(b.kernel.grid[i]);
            k->block[i] = u32(b.kernel.block[i]);
        }
        k->registers = u32(b.kernel.registers);
        k->static_smem = u32(b.kernel.static_smem);
        k->dynamic_smem = u32(b.kernel.dynamic_smem);
        k->graph = u32(b.kernel.graph);
        k->graph_node = b.kernel.graph_node;
        ev->type = TRC_EV_GPU_KERNEL;
        return TRC_OK;
    }
    case TRCF_GPU_MEMCPY: {
        trc_gpu_memcpy *m = &ev->u.memcpy;
        where(r, &m->where, &m->start_ns, &m->end_ns, &b.memcpy.w);
        m->bytes = b.memcpy.bytes;
        m->copy_kind = (trc_copy_kind)enum_or(b.memcpy.copy_kind, TRC_COPY_PTOP, TRC_COPY_UNKNOWN);
        m->src_kind = mem_kind(b.memcpy.src_kind);
        m->dst_kind = mem_kind(b.memcpy.dst_kind);
        m->dst_device = u32(b.memcpy.dst_device);
        ev->type = TRC_EV_GPU_MEMCPY;
        return TRC_OK;
    }
    case TRCF_GPU_MEMSET: {
        trc_gpu_memset *m = &ev->u.memset;
        where(r, &m->where, &m->start_ns, &m->end_ns, &b.memset.w);
        m->bytes = b.memset.bytes;
        m->value = u32(b.memset.value);
        m->mem_kind = mem_kind(b.memset.mem_kind);
        ev->type = TRC_EV_GPU_MEMSET;
        return TRC_OK;
    }
    case TRCF_GPU_SYNC: {
        trc_gpu_sync *s = &ev->u.sync;
        where(r, &s->where, &s->start_ns, &s->end_ns, &b.sync.w);
        s->sync_kind = (trc_sync_kind)enum_or(b.sync.sync_kind, TRC_SYNC_CONTEXT, TRC_SYNC_UNKNOWN);
        ev->type = TRC_EV_GPU_SYNC;
        return TRC_OK;
    }
    case TRCF_API_CALL: {
        trc_api_call *a = &ev->u.api;
        a->thread = map0(&r->threads, b.api.thread, &ok);
        if (!ok) {
            trcr_undef(r, rec, "thread", b.api.thread);
            return TRC_ERR_EOF;
        }
        a->stack = map0(&r->stacks, b.api.stack, &ok);
        if (!ok) {
            trcr_undef(r, rec, "stack", b.api.stack);
            return TRC_ERR_EOF;
        }
        if (!ev_str(r, rec, b.api.name, &a->name))
            return TRC_ERR_EOF;
        a->start_ns = b.api.start;
        a->end_ns = b.api.end;
        a->domain = (trc_api_domain)enum_or(b.api.domain, TRC_API_OTHER, TRC_API_OTHER);
        a->correlation = u32(b.api.correlation);
        a->result = i32(b.api.result);
        a->flags = u32(b.api.flags);
        a->capture_ns = b.api.capture;
        a->graph = u32(b.api.graph);
        a->graph_exec = u32(b.api.graph_exec);
        trcr_time(r, a->start_ns);
        trcr_time(r, a->end_ns);
        ev->type = TRC_EV_API_CALL;
        return TRC_OK;
    }
    case TRCF_MARKER: {
        trc_marker *m = &ev->u.marker;
        if (b.marker.kind > TRC_MARK_POP) {
            r->stats.skipped_records++;     /* [R-MARK-1]: like an unknown type */
            return TRC_ERR_EOF;
        }
        m->thread = map0(&r->threads, b.marker.thread, &ok);
        if (!ok) {
            trcr_undef(r, rec, "thread", b.marker.thread);
            return TRC_ERR_EOF;
        }
        if (!ev_str(r, rec, b.marker.name, &m->name))
            return TRC_ERR_EOF;
        if (!ev_str(r, rec, b.marker.domain, &m->domain))
            return TRC_ERR_EOF;
        m->kind = (trc_marker_kind)b.marker.kind;
        m->pid = b.marker.pid;
        m->start_ns = b.marker.start;
        m->end_ns = b.marker.end;
        m->color = u32(b.marker.color);
        m->id = b.marker.id;
        trcr_time(r, m->start_ns);
        trcr_time(r, m->end_ns);
        ev->type = TRC_EV_MARKER;
        return TRC_OK;
    }
    case TRCF_CLOCK_SYNC:
        if (b.clock_sync.domain < TRC_CLOCK_MONOTONIC || b.clock_sync.domain > TRC_CLOCK_GPU) {
            r->stats.skipped_records++;     /* [R-CLOCK-1] */
            return TRC_ERR_EOF;
        }
        ev->u.clock_sync.domain = (trc_clock_domain)b.clock_sync.domain;
        ev->u.clock_sync.device = i32(b.clock_sync.device);
        ev->u.clock_sync.trace_ns = b.clock_sync.time;
        ev->u.clock_sync.other_ns = b.clock_sync.other_ns;
        ev->type = TRC_EV_CLOCK_SYNC;
        return TRC_OK;
    case TRCF_LOSS: {
        trc_loss *l = &ev->u.loss;
        l->thread = map0(&r->threads, b.loss.thread, &ok);
        if (!ok) {
            trcr_undef(r, rec, "thread", b.loss.thread);
            return TRC_ERR_EOF;
        }
        if (!ev_str(r, rec, b.loss.detail, &l->detail))
            return TRC_ERR_EOF;
        l->kind = b.loss.kind >= TRC_LOSS_SAMPLES_MISSED && b.loss.kind <= TRC_LOSS_OTHER
                      ? (trc_loss_kind)b.loss.kind : TRC_LOSS_OTHER;
        l->count = b.loss.count;
        l->pid = b.loss.pid;
        l->start_ns = b.loss.start;
        l->end_ns = b.loss.end;
        l->offset = r->chunk_off;
        l->from_reader = 0;
        r->stats.losses++;
        ev->type = TRC_EV_LOSS;
        return TRC_OK;
    }
    case TRCF_PROCESS_EXIT:
        ev->u.process_exit.pid = b.process_exit.pid;
        ev->u.process_exit.time_ns = b.process_exit.time;
        ev->u.process_exit.exit_code = i32(b.process_exit.exit_code);
        ev->u.process_exit.signal = i32((int64_t)u32(b.process_exit.signal));
        trcr_time(r, b.process_exit.time);
        ev->type = TRC_EV_PROCESS_EXIT;
        return TRC_OK;
    case TRCF_SEGMENT_END: {
        trc_segment_end *e = &ev->u.segment_end;
        e->end_ns = b.segment_end.end;
        e->samples = b.segment_end.samples;
        e->threads = b.segment_end.threads;
        e->processes = b.segment_end.processes;
        e->gpu_activities = b.segment_end.gpu_activities;
        e->api_calls = b.segment_end.api_calls;
        e->lost_samples = b.segment_end.lost_samples;
        e->lost_gpu_records = b.segment_end.lost_gpu_records;
        trcr_time(r, e->end_ns);
        ev->type = TRC_EV_SEGMENT_END;
        return TRC_OK;
    }
    case TRCF_GPU_CONTEXT:
        return context_def(r, &b.gpu_context, ev);
    case TRCF_GPU_STREAM:
        return stream_def(r, rec, &b.gpu_stream, ev);
    }
    return TRC_ERR_EOF;
}
