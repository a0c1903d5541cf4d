/*
 * lib/writer_defs.c — the writer's interning of definitions: strings,
 * frames, stacks, threads, processes, counters, GPU devices, contexts
 * and streams (spec/DESIGN-NOTES.md "Interned ids", record types 2-6, 8,
 * 10, 21, 22).
 *
 * Each table maps content to a segment id through a trci_map; the
 * definition record goes into the open chunk the first time the content
 * is seen, so it always precedes its first use.  The record is encoded
 * before the map entry is added: if that insert then fails the call
 * reports TRC_ERR_NOMEM and a later call defines the content again under
 * a fresh id, which a reader accepts (it merges by content).
 */
#include "lib/writer_int.h"

#include <string.h>

#include "lib/util/alloc.h"
#include "lib/util/grow.h"
#include "format/limits.h"
#include "format/records.h"

static int same_process(const trcw_process *a, const trcw_process *b)
{
    return a->ppid == b->ppid && a->start_ns == b->start_ns && a->executable == b->executable &&
           a->interpreter == b->interpreter && a->command_line == b->command_line &&
           a->rank == b->rank && a->label == b->label && a->layout == b->layout;
}

static int same_device(const trcw_device *a, const trcw_device *b)
{
    return a->name == b->name && memcmp(a->uuid, b->uuid, 16) == 0 && a->sm_count == b->sm_count &&
           a->memory_bytes == b->memory_bytes && a->cc_major == b->cc_major &&
           a->cc_minor == b->cc_minor;
}

/* A definition seen for the first time: emit its record (whose body
 * already carries the new id nid), count it, and remember it so the next
 * lookup of the same key finds it. */
static trc_status define_new(trc_writer *w, unsigned type, const trcf_body *b, trci_map *m,
                             const void *key, size_t len, uint64_t h, uint32_t *count,
                             uint32_t nid, uint32_t *id)
{
    trc_status st = trcw_put(w, type, 0, 0, b);
    if (st != TRC_OK)
        return st;
    *count = nid;
    st = trci_insert(m, &w->arena, key, len, h, nid, NULL);
    if (st != TRC_OK)
        return st;
    *id = nid;
    return TRC_OK;
}

trc_status trc_writer_string(trc_writer *w, const char *s, size_t len, uint32_t *id)
{
    trcf_body b;
    uint64_t h;
    uint32_t nid;

    if (!w || !id || (!s && len))
        return TRC_ERR_ARG;
    if (w->err)
        return w->err;
    if (len == 0) {
        *id = 0;
        return TRC_OK;
    }
    if (len > TRC_MAX_STRING)
        return TRC_ERR_LIMIT;
    h = trci_hash(s, len);
    if (trci_find(&w->strings, s, len, h, id))
        return TRC_OK;
    if (memchr(s, 0, len))
        return TRC_ERR_ARG;
    if (w->n_strings >= TRC_MAX_IDS)
        return TRC_ERR_LIMIT;
    nid = w->n_strings + 1;
    b.string.id = nid;
    b.string.s.p = s;
    b.string.s.len = len;
    return define_new(w, TRCF_STRING, &b, &w->strings, s, len, h, &w->n_strings, nid, id);
}

trc_status trcw_cstr(trc_writer *w, const char *s, uint32_t *id)
{
    if (!s)
        s = "";
    return trc_writer_string(w, s, strlen(s), id);
}

trc_status trc_writer_frame(trc_writer *w, trc_frame_kind kind, const char *function,
                            const char *file, uint32_t line, uint32_t first_line, uint32_t *id)
{
    uint32_t key[5], fn, fl, nid;
    uint64_t h;
    trcf_body b;
    trc_status st;

    if (!w || !id || (unsigned)kind > TRC_FRAME_OTHER)
        return TRC_ERR_ARG;
    st = trcw_cstr(w, function, &fn);
    if (st == TRC_OK)
        st = trcw_cstr(w, file, &fl);
    if (st != TRC_OK)
        return st;
    key[0] = (uint32_t)kind;
    key[1] = fn;
    key[2] = fl;
    key[3] = line;
    key[4] = first_line;
    h = trci_hash(key, sizeof key);
    if (trci_find(&w->frames, key, sizeof key, h, id))
        return TRC_OK;
    if (w->n_frames >= TRC_MAX_IDS)
        return TRC_ERR_LIMIT;
    nid = w->n_frames + 1;
    b.frame.id = nid;
    b.frame.kind = (uint64_t)kind;
    b.frame.function = fn;
    b.frame.file = fl;
    b.frame.line = line;
    b.frame.first_line = first_line;
    return define_new(w, TRCF_FRAME, &b, &w->frames, key, sizeof key, h, &w->n_frames, nid, id);
}

trc_status trc_writer_stack(trc_writer *w, uint32_t parent, uint32_t frame, uint32_t *id)
{
    uint32_t key[2], depth, nid;
    uint64_t h;
    trcf_body b;
    trc_status st;

    if (!w || !id || frame == 0 || frame > w->n_frames || parent > w->n_stacks)
        return TRC_ERR_ARG;
    if (w->err)
        return w->err;
    key[0] = parent;
    key[1] = frame;
    h = trci_hash(key, sizeof key);
    if (trci_find(&w->stacks, key, sizeof key, h, id))
        return TRC_OK;
    depth = parent ? w->stack_depth[parent] + 1 : 1;
    if (depth > TRC_MAX_DEPTH || w->n_stacks >= TRC_MAX_IDS)
        return TRC_ERR_LIMIT;
    nid = w->n_stacks + 1;
    st = trcu_grow((void **)&w->stack_depth, &w->stack_depth_cap, nid, sizeof *w->stack_depth);
    if (st != TRC_OK)
        return st;
    b.stack.id = nid;
    b.stack.parent = parent;
    b.stack.frame = frame;
    /* capacity was ensured above; the slot is unused until n_stacks reaches nid */
    w->stack_depth[nid] = depth;
    return define_new(w, TRCF_STACK, &b, &w->stacks, key, sizeof key, h, &w->n_stacks, nid, id);
}

static trc_status put_thread(trc_writer *w, uint32_t id, int64_t pid, int64_t tid, uint32_t name)
{
    trcf_body b;

    b.thread.id = id;
    b.thread.pid = pid;
    b.thread.tid = tid;
    b.thread.name = name;
    return trcw_put(w, TRCF_THREAD, 0, 0, &b);
}

trc_status trc_writer_thread(trc_writer *w, int64_t pid, int64_t tid, const char *name, uint32_t *id)
{
    int64_t key[2];
    uint32_t nm, nid;
    uint64_t h;
    trc_status st;

    if (!w || !id)
        return TRC_ERR_ARG;
    st = trcw_cstr(w, name, &nm);
    if (st != TRC_OK)
        return st;
    key[0] = pid;
    key[1] = tid;
    h = trci_hash(key, sizeof key);
    if (trci_find(&w->threads, key, sizeof key, h, &nid)) {
        if (w->thread[nid].name != nm) {
            st = put_thread(w, nid, pid, tid, nm);     /* a rename */
            if (st != TRC_OK)
                return st;
            w->thread[nid].name = nm;
        }
        *id = nid;
        return TRC_OK;
    }
    if (w->n_threads >= TRC_MAX_IDS)
        return TRC_ERR_LIMIT;
    nid = w->n_threads + 1;
    st = trcu_grow((void **)&w->thread, &w->thread_cap, nid, sizeof *w->thread);
    if (st == TRC_OK)
        st = trcu_grow((void **)&w->pending, &w->pending_cap, nid, sizeof *w->pending);
    if (st == TRC_OK)
        st = put_thread(w, nid, pid, tid, nm);
    if (st != TRC_OK)
        return st;
    w->n_threads = nid;
    memset(&w->thread[nid], 0, sizeof w->thread[nid]);
    w->thread[nid].pid = pid;
    w->thread[nid].tid = tid;
    w->thread[nid].name = nm;
    st = trci_insert(&w->threads, &w->arena, key, sizeof key, h, nid, NULL);
    if (st != TRC_OK)
        return st;
    *id = nid;
    return TRC_OK;
}

trc_status trc_writer_process(trc_writer *w, const trc_process *p)
{
    trcw_process cur;
    uint32_t idx;
    uint64_t h;
    int known;
    trcf_body b;
    trc_status st;

    if (!w || !p)
        return TRC_ERR_ARG;
    memset(&cur, 0, sizeof cur);
    cur.ppid = p->ppid;
    cur.start_ns = p->start_ns;
    cur.rank = p->rank < 0 ? -1 : p->rank; /* every negative rank means unknown */
    st = trcw_cstr(w, p->executable, &cur.executable);
    if (st == TRC_OK)
        st = trcw_cstr(w, p->interpreter, &cur.interpreter);
    if (st == TRC_OK)
        st = trcw_cstr(w, p->command_line, &cur.command_line);
    if (st == TRC_OK)
        st = trcw_cstr(w, p->label, &cur.label);
    if (st == TRC_OK)
        st = trcw_cstr(w, p->layout, &cur.layout);
    if (st != TRC_OK)
        return st;
    h = trci_hash(&p->pid, sizeof p->pid);
    known = trci_find(&w->processes, &p->pid, sizeof p->pid, h, &idx);
    if (known && same_process(&w->proc[idx], &cur))
        return TRC_OK;
    if (!known) {
        idx = w->n_procs;
        st = trcu_grow((void **)&w->proc, &w->proc_cap, idx, sizeof *w->proc);
        if (st != TRC_OK)
            return st;
    }
    b.process.pid = p->pid;
    b.process.ppid = p->ppid;
    b.process.executable = cur.executable;
    b.process.interpreter = cur.interpreter;
    b.process.command_line = cur.command_line;
    b.process.start_ns = p->start_ns;
    b.process.rank = cur.rank;
    b.process.label = cur.label;
    b.process.layout = cur.layout;
    st = trcw_put(w, TRCF_PROCESS, 1, p->start_ns, &b);
    if (st != TRC_OK)
        return st;
    w->proc[idx] = cur;
    if (!known) {
        st = trci_insert(&w->processes, &w->arena, &p->pid, sizeof p->pid, h, idx, NULL);
        if (st != TRC_OK)
            return st;
        w->n_procs++;
    }
    return TRC_OK;
}

trc_status trc_writer_counter_def(trc_writer *w, const char *name, const char *unit,
                                  int64_t pid, int32_t device, uint32_t *id)
{
    int64_t key[4];
    uint32_t nm, un, nid;
    uint64_t h;
    trcf_body b;
    trc_status st;

    if (!w || !id)
        return TRC_ERR_ARG;
    st = trcw_cstr(w, name, &nm);
    if (st == TRC_OK)
        st = trcw_cstr(w, unit, &un);
    if (st != TRC_OK)
        return st;
    key[0] = nm;
    key[1] = un;
    key[2] = pid;
    key[3] = device;
    h = trci_hash(key, sizeof key);
    if (trci_find(&w->counters, key, sizeof key, h, id))
        return TRC_OK;
    if (w->n_counters >= TRC_MAX_IDS)
        return TRC_ERR_LIMIT;
    nid = w->n_counters + 1;
    b.counter_def.id = nid;
    b.counter_def.name = nm;
    b.counter_def.unit = un;
    b.counter_def.pid = pid;
    b.counter_def.device = device;
    return define_new(w, TRCF_COUNTER_DEF, &b, &w->counters, key, sizeof key, h, &w->n_counters,
                      nid, id);
}

trc_status trc_writer_gpu_device(trc_writer *w, const trc_gpu_device *d)
{
    trcw_device cur;
    uint64_t dev, h;
    uint32_t idx;
    int known;
    trcf_body b;
    trc_status st;

    if (!w || !d)
        return TRC_ERR_ARG;
    memset(&cur, 0, sizeof cur);
    st = trcw_cstr(w, d->name, &cur.name);
    if (st != TRC_OK)
        return st;
    memcpy(cur.uuid, d->uuid, 16);
    cur.sm_count = d->sm_count;
    cur.memory_bytes = d->memory_bytes;
    cur.cc_major = d->cc_major;
    cur.cc_minor = d->cc_minor;
    dev = d->device;
    h = trci_hash(&dev, sizeof dev);
    known = trci_find(&w->devices, &dev, sizeof dev, h, &idx);
    if (known && same_device(&w->dev[idx], &cur))
        return TRC_OK;
    if (!known) {
        idx = w->n_devs;
        st = trcu_grow((void **)&w->dev, &w->dev_cap, idx, sizeof *w->dev);
        if (st != TRC_OK)
            return st;
    }
    memset(&b, 0, sizeof b);
    b.gpu_device.device = dev;
    b.gpu_device.name = cur.name;
    memcpy(b.gpu_device.uuid, cur.uuid, 16);
    b.gpu_device.sm_count = cur.sm_count;
    b.gpu_device.memory_bytes = cur.memory_bytes;
    b.gpu_device.cc_major = cur.cc_major;
    b.gpu_device.cc_minor = cur.cc_minor;
    st = trcw_put(w, TRCF_GPU_DEVICE, 0, 0, &b);
    if (st != TRC_OK)
        return st;
    w->dev[idx] = cur;
    if (!known) {
        st = trci_insert(&w->devices, &w->arena, &dev, sizeof dev, h, idx, NULL);
        if (st != TRC_OK)
            return st;
        w->n_devs++;
    }
    return TRC_OK;
}

trc_status trc_writer_gpu_context(trc_writer *w, const trc_gpu_context *c)
{
    int64_t key[3];
    uint64_t h;
    uint32_t idx;
    trcf_body b;
    trc_status st;

    if (!w || !c)
        return TRC_ERR_ARG;
    key[0] = c->pid;
    key[1] = c->device;
    key[2] = c->context;
    h = trci_hash(key, sizeof key);
    if (trci_find(&w->gpu_ctxs, key, sizeof key, h, &idx))
        return TRC_OK;
    memset(&b, 0, sizeof b);
    b.gpu_context.pid = c->pid;
    b.gpu_context.device = c->device;
    b.gpu_context.context = c->context;
    st = trcw_put(w, TRCF_GPU_CONTEXT, 0, 0, &b);
    if (st != TRC_OK)
        return st;
    return trci_insert(&w->gpu_ctxs, &w->arena, key, sizeof key, h, 0, NULL);
}

trc_status trc_writer_gpu_stream(trc_writer *w, const trc_gpu_stream *s)
{
    trcw_stream cur;
    int64_t key[4];
    uint64_t h;
    uint32_t idx;
    int known;
    trcf_body b;
    trc_status st;

    if (!w || !s)
        return TRC_ERR_ARG;
    memset(&cur, 0, sizeof cur);
    st = trcw_cstr(w, s->name, &cur.name);
    if (st != TRC_OK)
        return st;
    cur.priority = s->priority;
    cur.flags = s->flags;
    key[0] = s->pid;
    key[1] = s->device;
    key[2] = s->context;
    key[3] = s->stream;
    h = trci_hash(key, sizeof key);
    known = trci_find(&w->gpu_streams, key, sizeof key, h, &idx);
    if (known && w->stream[idx].priority == cur.priority && w->stream[idx].flags == cur.flags &&
        w->stream[idx].name == cur.name)
        return TRC_OK;
    if (!known) {
        idx = w->n_streams;
        st = trcu_grow((void **)&w->stream, &w->stream_cap, idx, sizeof *w->stream);
        if (st != TRC_OK)
            return st;
    }
    memset(&b, 0, sizeof b);
    b.gpu_stream.pid = s->pid;
    b.gpu_stream.device = s->device;
    b.gpu_stream.context = s->context;
    b.gpu_stream.stream = s->stream;
    b.gpu_stream.priority = s->priority;
    b.gpu_stream.flags = s->flags;
    b.gpu_stream.name = cur.name;
    st = trcw_put(w, TRCF_GPU_STREAM, 0, 0, &b);
    if (st != TRC_OK)
        return st;
    w->stream[idx] = cur;
    if (!known) {
        st = trci_insert(&w->gpu_streams, &w->arena, key, sizeof key, h, idx, NULL);
        if (st != TRC_OK)
            return st;
        w->n_streams++;
    }
    return TRC_OK;
}

void trcw_defs_free(trc_writer *w)
{
    trci_free(&w->strings);
    trci_free(&w->frames);
    trci_free(&w->stacks);
    trci_free(&w->threads);
    trci_free(&w->counters);
    trci_free(&w->processes);
    trci_free(&w->devices);
    trci_free(&w->gpu_ctxs);
    trci_free(&w->gpu_streams);
    trca_free_all(&w->arena);
    trc_free(w->stack_depth);
    trc_free(w->thread);
    trc_free(w->proc);
    trc_free(w->dev);
    trc_free(w->stream);
}
