/*
 * lib/export/common/cpuview.c — function-level frames and stacks for the flame
 * exporters (see cpuview.h; the reader's model is spec §6).
 *
 * Hash indexes (lib/util/hashtab.h) intern view frames (by content and by
 * look) and view stacks (by parent, frame); a dense array caches the reader-stack ->
 * view-stack mapping so that the per-sample cost is one array load.
 */
#include "lib/export/common/cpuview.h"

#include <string.h>

#include "lib/util/alloc.h"
#include "lib/util/grow.h"
#include "lib/export/common/json_out.h"
#include "lib/util/hashtab.h"
#include "lib/procname.h"

#define NO_ID UINT32_MAX

typedef cpuview_stack vstack;

typedef struct vframe {
    cpuview_frame pub;
    uint32_t first;        /* def line, part of the key */
} vframe;

struct cpuview {
    int lines;
    vframe *frames;        /* view frames, index order */
    uint32_t n_frames, cap_frames;
    trch_index frame_index; /* by content */
    trch_index look_index;  /* by (function, file, line): first frame of each look */
    uint32_t *frame_map;   /* reader frame id -> view frame index + 1 */
    uint32_t frame_map_cap;

    vstack *stacks;        /* view stacks; [0] is the empty stack */
    uint32_t n_stacks, cap_stacks; /* n_stacks counts the empty one */
    trch_index stack_index; /* by (parent, frame) */
    uint32_t *stack_map;   /* reader stack id -> view id + 1, 0 = not yet */
    uint32_t stack_map_cap;

    uint32_t *walk;        /* scratch: reader stack ids while mapping */
    uint32_t walk_cap;
    uint32_t no_python;    /* view stack for reader stack 0, 0 = not yet */
};

static uint64_t hash_str(uint64_t h, const char *str)
{
    return trch_hash_more(h, str, strlen(str) + 1);
}

cpuview *cpuview_new(int lines)
{
    cpuview *v = trc_calloc(1, sizeof *v);
    if (!v)
        return NULL;
    v->lines = lines;
    if (trcu_grow32(&v->stacks, &v->cap_stacks, 0, sizeof *v->stacks)) {
        trc_free(v);
        return NULL;
    }
    v->n_stacks = 1; /* the empty stack, all zero */
    return v;
}

void cpuview_free(cpuview *v)
{
    if (!v)
        return;
    trc_free(v->frames);
    trch_index_cleanup(&v->frame_index);
    trch_index_cleanup(&v->look_index);
    trc_free(v->frame_map);
    trc_free(v->stacks);
    trch_index_cleanup(&v->stack_index);
    trc_free(v->stack_map);
    trc_free(v->walk);
    trc_free(v);
}

static uint64_t frame_hash(const vframe *f)
{
    uint64_t h = hash_str(hash_str(0, f->pub.function), f->pub.file);
    return trch_hash_more_u64(h, ((uint64_t)f->pub.line << 32 | f->first) ^
                                     (uint64_t)f->pub.kind << 61);
}

static int frame_equal(const vframe *a, const vframe *b)
{
    return a->pub.kind == b->pub.kind && a->pub.line == b->pub.line && a->first == b->first &&
           strcmp(a->pub.function, b->pub.function) == 0 && strcmp(a->pub.file, b->pub.file) == 0;
}

static uint64_t look_hash(const cpuview_frame *f)
{
    return trch_hash_more_u64(hash_str(hash_str(0, f->function), f->file), f->line);
}

static int look_equal(const cpuview_frame *a, const cpuview_frame *b)
{
    return a->line == b->line && strcmp(a->function, b->function) == 0 &&
           strcmp(a->file, b->file) == 0;
}

/* The look of frame f, about to become frame index idx: the first
 * frame that shows the same, or idx.  -1 when out of memory. */
static int find_look(cpuview *v, const cpuview_frame *f, uint32_t idx, uint32_t *look)
{
    uint64_t h = look_hash(f);
    trch_probe p;

    for (uint32_t i = trch_first(&v->look_index, h, &p); i != TRCH_NONE;
         i = trch_next(&v->look_index, &p)) {
        if (look_equal(&v->frames[i].pub, f)) {
            *look = i;
            return 0;
        }
    }
    if (trch_add(&v->look_index, h, idx) != TRC_OK)
        return -1;
    *look = idx;
    return 0;
}

/* Intern a view frame; *idx gets its index.  -1 when out of memory. */
static int frame_intern(cpuview *v, const vframe *f, uint32_t *idx)
{
    uint64_t h = frame_hash(f);
    trch_probe p;

    for (uint32_t i = trch_first(&v->frame_index, h, &p); i != TRCH_NONE;
         i = trch_next(&v->frame_index, &p)) {
        if (frame_equal(&v->frames[i], f)) {
            *idx = i;
            return 0;
        }
    }
    if (v->n_frames == UINT32_MAX - 1 || trch_reserve(&v->frame_index, v->n_frames + 1) ||
        trcu_grow32(&v->frames, &v->cap_frames, v->n_frames, sizeof *v->frames))
        return -1;
    v->frames[v->n_frames] = *f;
    if (find_look(v, &f->pub, v->n_frames, &v->frames[v->n_frames].pub.look))
        return -1;
    (void)trch_add(&v->frame_index, h, v->n_frames); /* cannot fail after the reserve */
    *idx = v->n_frames++;
    return 0;
}

/* View frame index for reader frame id (cached).  -1 when out of memory. */
static int map_frame(cpuview *v, const trc_reader *r, uint32_t id, uint32_t *idx)
{
    const trc_frame *tf;
    vframe f;

    if (id < v->frame_map_cap && v->frame_map[id]) {
        *idx = v->frame_map[id] - 1;
        return 0;
    }
    tf = trc_reader_frame(r, id);
    memset(&f, 0, sizeof f);
    if (tf) {
        f.pub.function = tf->function && tf->function[0] ? tf->function : "<unknown>";
        f.pub.file = tf->file ? tf->file : "";
        f.pub.kind = tf->kind;
        f.first = tf->first_line;
        f.pub.line = v->lines ? tf->line : tf->first_line;
    } else {
        f.pub.function = "<unknown>";
        f.pub.file = "";
        f.pub.kind = TRC_FRAME_OTHER;
    }
    if (frame_intern(v, &f, idx))
        return -1;
    if (tf && id < UINT32_MAX) { /* unknown ids are not cached: they may be defined later */
        if (trcu_grow32(&v->frame_map, &v->frame_map_cap, id, sizeof *v->frame_map))
            return -1;
        v->frame_map[id] = *idx + 1;
    }
    return 0;
}

static uint64_t stack_hash(uint32_t parent, uint32_t frame)
{
    return trch_hash_u64((uint64_t)parent << 32 | frame);
}

/* Intern view stack (parent, frame).  -1 when out of memory. */
static int stack_intern(cpuview *v, uint32_t parent, uint32_t frame, uint32_t *id)
{
    uint64_t h = stack_hash(parent, frame);
    trch_probe p;

    for (uint32_t i = trch_first(&v->stack_index, h, &p); i != TRCH_NONE;
         i = trch_next(&v->stack_index, &p)) {
        const vstack *e = &v->stacks[i];
        if (e->parent == parent && e->frame == frame) {
            *id = i;
            return 0;
        }
    }
    if (v->n_stacks >= UINT32_MAX - 1 || trch_reserve(&v->stack_index, v->n_stacks) ||
        trcu_grow32(&v->stacks, &v->cap_stacks, v->n_stacks, sizeof *v->stacks))
        return -1;
    v->stacks[v->n_stacks].parent = parent;
    v->stacks[v->n_stacks].frame = frame;
    v->stacks[v->n_stacks].depth = v->stacks[parent].depth + 1;
    (void)trch_add(&v->stack_index, h, v->n_stacks); /* cannot fail after the reserve */
    *id = v->n_stacks++;
    return 0;
}

trc_status cpuview_map_stack(cpuview *v, const trc_reader *r, uint32_t stack, uint32_t *out)
{
    uint32_t n = 0, cur = stack, view = 0;

    if (stack < v->stack_map_cap && v->stack_map[stack]) {
        *out = v->stack_map[stack] - 1;
        return TRC_OK;
    }
    /* Collect the unmapped reader stacks from `stack` up to a mapped one
     * (or the root), then intern them root-first. */
    while (cur != 0) {
        const trc_stack *ts;
        if (cur < v->stack_map_cap && v->stack_map[cur]) {
            view = v->stack_map[cur] - 1;
            break;
        }
        if (trcu_grow32(&v->walk, &v->walk_cap, n, sizeof *v->walk))
            return TRC_ERR_NOMEM;
        v->walk[n++] = cur;
        ts = trc_reader_stack(r, cur);
        if (!ts || ts->parent >= cur)
            break; /* unknown stack, or a malformed link: treat as a root */
        cur = ts->parent;
    }
    while (n > 0) {
        uint32_t id = v->walk[--n], frame;
        const trc_stack *ts = trc_reader_stack(r, id);
        if (map_frame(v, r, ts ? ts->frame : UINT32_MAX, &frame) ||
            stack_intern(v, view, frame, &view))
            return TRC_ERR_NOMEM;
        if (ts) {
            if (trcu_grow32(&v->stack_map, &v->stack_map_cap, id, sizeof *v->stack_map))
                return TRC_ERR_NOMEM;
            v->stack_map[id] = view + 1;
        }
    }
    *out = view;
    return TRC_OK;
}

trc_status cpuview_sample_stack(cpuview *v, const trc_reader *r, uint32_t stack, uint32_t *out)
{
    vframe f;
    uint32_t idx;

    if (stack != 0)
        return cpuview_map_stack(v, r, stack, out);
    if (!v->no_python) {
        memset(&f, 0, sizeof f);
        f.pub.function = CPUVIEW_NO_PYTHON_FRAMES;
        f.pub.file = "";
        f.pub.kind = TRC_FRAME_OTHER;
        if (frame_intern(v, &f, &idx) || stack_intern(v, 0, idx, &v->no_python))
            return TRC_ERR_NOMEM;
    }
    *out = v->no_python;
    return TRC_OK;
}

trc_status cpuview_intern_frame(cpuview *v, trc_frame_kind kind, const char *function,
                                const char *file, uint32_t line, uint32_t *index)
{
    vframe f;

    memset(&f, 0, sizeof f);
    f.pub.function = function && function[0] ? function : "<unknown>";
    f.pub.file = file ? file : "";
    f.pub.kind = kind;
    f.pub.line = line;
    f.first = line;
    return frame_intern(v, &f, index) ? TRC_ERR_NOMEM : TRC_OK;
}

const cpuview_stack *cpuview_stacks(const cpuview *v)
{
    return v->stacks;
}

uint32_t cpuview_stack_parent(const cpuview *v, uint32_t id)
{
    return id < v->n_stacks ? v->stacks[id].parent : 0;
}

uint32_t cpuview_stack_frame(const cpuview *v, uint32_t id)
{
    return id < v->n_stacks ? v->stacks[id].frame : 0;
}

uint32_t cpuview_stack_depth(const cpuview *v, uint32_t id)
{
    return id < v->n_stacks ? v->stacks[id].depth : 0;
}

uint32_t cpuview_stack_count(const cpuview *v)
{
    return v->n_stacks - 1;
}

const cpuview_frame *cpuview_frame_at(const cpuview *v, uint32_t index)
{
    return index < v->n_frames ? &v->frames[index].pub : NULL;
}

uint32_t cpuview_frame_count(const cpuview *v)
{
    return v->n_frames;
}

const char *cpuview_kind_name(trc_frame_kind kind)
{
    switch (kind) {
    case TRC_FRAME_PYTHON: return "python";
    case TRC_FRAME_NATIVE: return "native";
    case TRC_FRAME_GPU_KERNEL: return "gpu";
    default: return "other";
    }
}

void cpuview_write_process_label(jsonw *f, const trc_process *p, int64_t pid, int with_id)
{
    char name[PROCNAME_MAX];
    size_t n = with_id ? procname(p, pid, name, sizeof name) : procname_base(p, name, sizeof name);
    jsonw_str_body(f, name, n);
}

void cpuview_write_thread_label(jsonw *f, const trc_thread *t, int64_t tid, int with_id)
{
    const char *name = t && t->name && t->name[0] ? t->name : "<unnamed>";
    jsonw_str_body(f, name, strlen(name));
    if (!with_id)
        return;
    jsonw_raw(f, " (tid ");
    jsonw_i64(f, tid);
    jsonw_putc(f, ')');
}
