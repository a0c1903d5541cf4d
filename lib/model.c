/*
 * lib/model.c — the reader's merged, deduplicated trace model (see
 * lib/model.h).  Each table: a trci_map from content key to global id
 * plus an array of stable pointers indexed by id.
 */
#include "lib/model.h"

#include <string.h>

#include "lib/util/alloc.h"
#include "lib/util/grow.h"
#include "format/limits.h"

/* Global string id to C string; id 0 is "" even before any string. */
static const char *str_of(const trcm_model *m, uint32_t id)
{
    return id ? m->strs[id] : "";
}

void trcm_init(trcm_model *m)
{
    memset(m, 0, sizeof *m);
}

void trcm_cleanup(trcm_model *m)
{
    trci_free(&m->str_map);
    trci_free(&m->frame_map);
    trci_free(&m->stack_map);
    trci_free(&m->thread_map);
    trci_free(&m->proc_map);
    trci_free(&m->counter_map);
    trci_free(&m->dev_map);
    trci_free(&m->ctx_map);
    trci_free(&m->stream_map);
    trc_free(m->ctxs);
    trc_free(m->streams);
    trc_free(m->strs);
    trc_free(m->frames);
    trc_free(m->stacks);
    trc_free(m->threads);
    trc_free(m->procs);
    trc_free(m->counters);
    trc_free(m->devs);
    trca_free_all(&m->arena);
    memset(m, 0, sizeof *m);
}

/* Make arr, one of the model's tables (all arrays of pointers), hold
 * index idx: lib/util's grow, whose new rows are NULL.  Inline, so that
 * a definition that fits (most) costs no call. */
static inline trc_status reserve(void *arrp, size_t *cap, size_t idx)
{
    return idx < *cap ? TRC_OK : trcu_grow(arrp, cap, idx, sizeof(void *));
}

trc_status trcm_string(trcm_model *m, const char *s, size_t len, uint32_t *gid)
{
    uint64_t h;
    const void *stored;
    trc_status st;

    if (m->n_strs == 0) {
        st = reserve(&m->strs, &m->strs_cap, 0);
        if (st != TRC_OK)
            return st;
        m->strs[0] = "";
        m->n_strs = 1;
    }
    if (len == 0) {
        *gid = 0;
        return TRC_OK;
    }
    h = trci_hash(s, len);
    if (trci_find(&m->str_map, s, len, h, gid))
        return TRC_OK;
    st = reserve(&m->strs, &m->strs_cap, m->n_strs);
    if (st != TRC_OK)
        return st;
    st = trci_insert(&m->str_map, &m->arena, s, len, h, m->n_strs, &stored);
    if (st != TRC_OK)
        return st;
    m->strs[m->n_strs] = stored;
    *gid = m->n_strs++;
    return TRC_OK;
}

trc_status trcm_frame(trcm_model *m, trc_frame_kind kind, uint32_t function, uint32_t file,
                      uint32_t line, uint32_t first_line, uint32_t *gid)
{
    uint32_t key[5] = { (uint32_t)kind, function, file, line, first_line };
    uint64_t h = trci_hash(key, sizeof key);
    trc_frame *f;
    uint32_t id;
    trc_status st;

    if (trci_find(&m->frame_map, key, sizeof key, h, gid))
        return TRC_OK;
    id = m->n_frames + 1;
    st = reserve(&m->frames, &m->frames_cap, id);
    if (st != TRC_OK)
        return st;
    f = trca_alloc(&m->arena, sizeof *f);
    if (!f)
        return TRC_ERR_NOMEM;
    st = trci_insert(&m->frame_map, &m->arena, key, sizeof key, h, id, NULL);
    if (st != TRC_OK)
        return st;
    f->id = id;
    f->kind = kind;
    f->function = str_of(m, function);
    f->file = str_of(m, file);
    f->line = line;
    f->first_line = first_line;
    m->frames[id] = f;
    m->n_frames = id;
    *gid = id;
    return TRC_OK;
}

trc_status trcm_stack(trcm_model *m, uint32_t parent, uint32_t frame, uint32_t *gid)
{
    uint32_t key[2] = { parent, frame };
    uint64_t h = trci_hash(key, sizeof key);
    trc_stack *s;
    uint32_t id, depth;
    trc_status st;

    if (m->stacks_cap == 0) {
        st = reserve(&m->stacks, &m->stacks_cap, 0);
        if (st != TRC_OK)
            return st;
        m->stacks[0] = &m->empty_stack;
    }
    if (trci_find(&m->stack_map, key, sizeof key, h, gid))
        return TRC_OK;
    depth = parent ? m->stacks[parent]->depth + 1 : 1;
    if (depth > TRC_MAX_DEPTH)
        return TRC_ERR_LIMIT;
    id = m->n_stacks + 1;
    st = reserve(&m->stacks, &m->stacks_cap, id);
    if (st != TRC_OK)
        return st;
    s = trca_alloc(&m->arena, sizeof *s);
    if (!s)
        return TRC_ERR_NOMEM;
    st = trci_insert(&m->stack_map, &m->arena, key, sizeof key, h, id, NULL);
    if (st != TRC_OK)
        return st;
    s->id = id;
    s->parent = parent;
    s->frame = frame;
    s->depth = depth;
    m->stacks[id] = s;
    m->n_stacks = id;
    *gid = id;
    return TRC_OK;
}

trc_status trcm_thread(trcm_model *m, int64_t pid, int64_t tid, uint32_t name, uint32_t *gid,
                       int *changed)
{
    int64_t key[2] = { pid, tid };
    uint64_t h = trci_hash(key, sizeof key);
    trc_thread *t;
    uint32_t id;
    trc_status st;

    *changed = 0;
    if (trci_find(&m->thread_map, key, sizeof key, h, gid)) {
        t = m->threads[*gid];
        if (t->name != str_of(m, name)) {
            t->name = str_of(m, name);
            *changed = 1;
        }
        return TRC_OK;
    }
    id = m->n_threads + 1;
    st = reserve(&m->threads, &m->threads_cap, id);
    if (st != TRC_OK)
        return st;
    t = trca_alloc(&m->arena, sizeof *t);
    if (!t)
        return TRC_ERR_NOMEM;
    st = trci_insert(&m->thread_map, &m->arena, key, sizeof key, h, id, NULL);
    if (st != TRC_OK)
        return st;
    t->id = id;
    t->pid = pid;
    t->tid = tid;
    t->name = str_of(m, name);
    m->threads[id] = t;
    m->n_threads = id;
    *gid = id;
    *changed = 1;
    return TRC_OK;
}

static int same_process(const trc_process *a, const trc_process *b)
{
    return a->ppid == b->ppid && a->executable == b->executable &&
           a->interpreter == b->interpreter && a->command_line == b->command_line &&
           a->start_ns == b->start_ns && a->rank == b->rank && a->label == b->label &&
           a->layout == b->layout;
}

trc_status trcm_process(trcm_model *m, const trc_process *p, const trc_process **out, int *changed)
{
    uint64_t h = trci_hash(&p->pid, sizeof p->pid);
    trc_process *q;
    uint32_t idx;
    trc_status st;

    *changed = 0;
    if (trci_find(&m->proc_map, &p->pid, sizeof p->pid, h, &idx)) {
        q = m->procs[idx];
        if (!same_process(q, p)) {
            uint32_t id = q->id;
            *q = *p;
            q->id = id;
            *changed = 1;
        }
        *out = q;
        return TRC_OK;
    }
    idx = m->n_procs;
    st = reserve(&m->procs, &m->procs_cap, idx);
    if (st != TRC_OK)
        return st;
    q = trca_alloc(&m->arena, sizeof *q);
    if (!q)
        return TRC_ERR_NOMEM;
    st = trci_insert(&m->proc_map, &m->arena, &p->pid, sizeof p->pid, h, idx, NULL);
    if (st != TRC_OK)
        return st;
    *q = *p;
    q->id = idx + 1;
    m->procs[idx] = q;
    m->n_procs++;
    *out = q;
    *changed = 1;
    return TRC_OK;
}

trc_status trcm_counter(trcm_model *m, uint32_t name, uint32_t unit, int64_t pid, int32_t device,
                        uint32_t *gid, int *is_new)
{
    int64_t key[4] = { name, unit, pid, device };
    uint64_t h = trci_hash(key, sizeof key);
    trc_counter_def *c;
    uint32_t id;
    trc_status st;

    *is_new = 0;
    if (trci_find(&m->counter_map, key, sizeof key, h, gid))
        return TRC_OK;
    id = m->n_counters + 1;
    st = reserve(&m->counters, &m->counters_cap, id);
    if (st != TRC_OK)
        return st;
    c = trca_alloc(&m->arena, sizeof *c);
    if (!c)
        return TRC_ERR_NOMEM;
    st = trci_insert(&m->counter_map, &m->arena, key, sizeof key, h, id, NULL);
    if (st != TRC_OK)
        return st;
    c->id = id;
    c->name = str_of(m, name);
    c->unit = str_of(m, unit);
    c->pid = pid;
    c->device = device;
    m->counters[id] = c;
    m->n_counters = id;
    *gid = id;
    *is_new = 1;
    return TRC_OK;
}

static int same_device(const trc_gpu_device *a, const trc_gpu_device *b)
{
    return a->name == b->name && memcmp(a->uuid, b->uuid, 16) == 0 && a->sm_count == b->sm_count &&
           a->memory_bytes == b->memory_bytes && a->cc_major == b->cc_major &&
           a->cc_minor == b->cc_minor;
}

trc_status trcm_device(trcm_model *m, const trc_gpu_device *d, const trc_gpu_device **out,
                       int *changed)
{
    uint64_t key = d->device;
    uint64_t h = trci_hash(&key, sizeof key);
    trc_gpu_device *q;
    uint32_t idx;
    trc_status st;

    *changed = 0;
    if (trci_find(&m->dev_map, &key, sizeof key, h, &idx)) {
        q = m->devs[idx];
        if (!same_device(q, d)) {
            *q = *d;
            *changed = 1;
        }
        *out = q;
        return TRC_OK;
    }
    idx = m->n_devs;
    st = reserve(&m->devs, &m->devs_cap, idx);
    if (st != TRC_OK)
        return st;
    q = trca_alloc(&m->arena, sizeof *q);
    if (!q)
        return TRC_ERR_NOMEM;
    st = trci_insert(&m->dev_map, &m->arena, &key, sizeof key, h, idx, NULL);
    if (st != TRC_OK)
        return st;
    *q = *d;
    m->devs[idx] = q;
    m->n_devs++;
    *out = q;
    *changed = 1;
    return TRC_OK;
}

/* Find or add the description keyed by key[0..n): *slot is its stable
 * copy (new: zeroed, *is_new = 1). */
static trc_status described(trcm_model *m, trci_map *map, void *arrp, size_t *cap, uint32_t *count,
                            const int64_t *key, size_t n, size_t size, void **slot, int *is_new)
{
    void ***arr = arrp;
    uint64_t h = trci_hash(key, n * sizeof *key);
    uint32_t idx;
    void *q;
    trc_status st;

    *is_new = 0;
    if (trci_find(map, key, n * sizeof *key, h, &idx)) {
        *slot = (*arr)[idx];
        return TRC_OK;
    }
    idx = *count;
    st = reserve(arr, cap, idx);
    if (st != TRC_OK)
        return st;
    q = trca_alloc(&m->arena, size);
    if (!q)
        return TRC_ERR_NOMEM;
    st = trci_insert(map, &m->arena, key, n * sizeof *key, h, idx, NULL);
    if (st != TRC_OK)
        return st;
    memset(q, 0, size);
    (*arr)[idx] = q;
    (*count)++;
    *slot = q;
    *is_new = 1;
    return TRC_OK;
}

trc_status trcm_context(trcm_model *m, const trc_gpu_context *c, const trc_gpu_context **out,
                        int *changed)
{
    int64_t key[3] = { c->pid, c->device, c->context };
    void *slot;
    trc_status st = described(m, &m->ctx_map, &m->ctxs, &m->ctxs_cap, &m->n_ctxs, key, 3,
                              sizeof **m->ctxs, &slot, changed);

    if (st != TRC_OK)
        return st;
    if (*changed)
        *(trc_gpu_context *)slot = *c;
    *out = slot;
    return TRC_OK;
}

trc_status trcm_stream(trcm_model *m, const trc_gpu_stream *s, const trc_gpu_stream **out,
                       int *changed)
{
    int64_t key[4] = { s->pid, s->device, s->context, s->stream };
    trc_gpu_stream *q;
    void *slot;
    trc_status st = described(m, &m->stream_map, &m->streams, &m->streams_cap, &m->n_streams,
                              key, 4, sizeof **m->streams, &slot, changed);

    if (st != TRC_OK)
        return st;
    q = slot;
    if (*changed || q->priority != s->priority || q->flags != s->flags || q->name != s->name) {
        *q = *s;
        *changed = 1;
    }
    *out = q;
    return TRC_OK;
}

const trc_process *trcm_process_by_pid(const trcm_model *m, int64_t pid)
{
    uint32_t idx;

    if (!trci_find(&m->proc_map, &pid, sizeof pid, trci_hash(&pid, sizeof pid), &idx))
        return NULL;
    return m->procs[idx];
}

const trc_gpu_device *trcm_device_by_number(const trcm_model *m, uint32_t device)
{
    uint64_t key = device;
    uint32_t idx;

    if (!trci_find(&m->dev_map, &key, sizeof key, trci_hash(&key, sizeof key), &idx))
        return NULL;
    return m->devs[idx];
}
