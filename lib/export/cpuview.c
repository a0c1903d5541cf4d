/*
 * lib/export/cpuview.c — function-level frames and stacks for the flame
 * exporters (see cpuview.h; the reader's model is spec §6).
 *
 * Two open-addressing hash tables intern view frames (by content) and
 * view stacks (by parent, frame); a dense array caches the reader-stack ->
 * view-stack mapping so that the per-sample cost is one array load.
 */
#include "lib/export/cpuview.h"

#include <string.h>

#include "format/alloc.h"
#include "lib/export/json_out.h"

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
    uint32_t *frame_slots; /* hash slots: index + 1, 0 = empty */
    uint32_t frame_slot_cap;
    uint32_t *look_slots;  /* hash slots by (function, file, line): index + 1 */
    uint32_t look_slot_cap;
    uint32_t *frame_map;   /* reader frame id -> view frame index + 1 */
    uint32_t frame_map_cap;

    vstack *stacks;        /* view stacks; [0] is the empty stack */
    uint32_t n_stacks, cap_stacks; /* n_stacks counts the empty one */
    uint32_t *stack_slots; /* hash slots: view id, 0 = empty */
    uint32_t stack_slot_cap;
    uint32_t *stack_map;   /* reader stack id -> view id + 1, 0 = not yet */
    uint32_t stack_map_cap;

    uint32_t *walk;        /* scratch: reader stack ids while mapping */
    uint32_t walk_cap;
    uint32_t no_python;    /* view stack for reader stack 0, 0 = not yet */
};

static uint64_t hash_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *s = p;
    for (size_t i = 0; i < n; i++) {
        h ^= s[i];
        h *= 0x100000001b3ull; /* FNV-1a */
    }
    return h;
}

static uint64_t hash_u32(uint64_t h, uint32_t v)
{
    return hash_bytes(h, &v, sizeof v);
}

int cpuview_grow(void *arrp, uint32_t *cap, uint32_t need, size_t sz, uint32_t first)
{
    void **arr = arrp;
    uint32_t ncap = *cap ? *cap : first ? first : 16;
    void *p;

    if (need <= *cap)
        return 0;
    while (ncap < need) {
        if (ncap > UINT32_MAX / 2)
            return -1;
        ncap *= 2;
    }
    p = trc_realloc(*arr, (size_t)ncap * sz);
    if (!p)
        return -1;
    memset((char *)p + (size_t)*cap * sz, 0, (size_t)(ncap - *cap) * sz);
    *arr = p;
    *cap = ncap;
    return 0;
}

cpuview *cpuview_new(int lines)
{
    cpuview *v = trc_calloc(1, sizeof *v);
    if (!v)
        return NULL;
    v->lines = lines;
    if (cpuview_grow(&v->stacks, &v->cap_stacks, 1, sizeof *v->stacks, 16)) {
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
    trc_free(v->frame_slots);
    trc_free(v->look_slots);
    trc_free(v->frame_map);
    trc_free(v->stacks);
    trc_free(v->stack_slots);
    trc_free(v->stack_map);
    trc_free(v->walk);
    trc_free(v);
}

static uint64_t frame_hash(const vframe *f)
{
    uint64_t h = 0xcbf29ce484222325ull;
    h = hash_bytes(h, f->pub.function, strlen(f->pub.function) + 1);
    h = hash_bytes(h, f->pub.file, strlen(f->pub.file) + 1);
    h = hash_u32(h, f->pub.line);
    h = hash_u32(h, f->first);
    return hash_u32(h, (uint32_t)f->pub.kind);
}

static int frame_equal(const vframe *a, const vframe *b)
{
    return a->pub.kind == b->pub.kind && a->pub.line == b->pub.line && a->first == b->first &&
           strcmp(a->pub.function, b->pub.function) == 0 && strcmp(a->pub.file, b->pub.file) == 0;
}

static uint64_t look_hash(const cpuview_frame *f)
{
    uint64_t h = 0xcbf29ce484222325ull;
    h = hash_bytes(h, f->function, strlen(f->function) + 1);
    h = hash_bytes(h, f->file, strlen(f->file) + 1);
    return hash_u32(h, f->line);
}

static int look_equal(const cpuview_frame *a, const cpuview_frame *b)
{
    return a->line == b->line && strcmp(a->function, b->function) == 0 &&
           strcmp(a->file, b->file) == 0;
}

/* Rebuild the look hash with cap slots: one slot per distinct look. */
static int look_rehash(cpuview *v, uint32_t cap)
{
    uint32_t *slots = trc_calloc(cap, sizeof *slots);
    if (!slots)
        return -1;
    for (uint32_t i = 0; i < v->n_frames; i++) {
        uint32_t s;
        if (v->frames[i].pub.look != i)
            continue;
        s = (uint32_t)look_hash(&v->frames[i].pub) & (cap - 1);
        while (slots[s])
            s = (s + 1) & (cap - 1);
        slots[s] = i + 1;
    }
    trc_free(v->look_slots);
    v->look_slots = slots;
    v->look_slot_cap = cap;
    return 0;
}

/* The look of frame f, about to become frame index idx: the first
 * frame that shows the same, or idx.  -1 when out of memory. */
static int find_look(cpuview *v, const cpuview_frame *f, uint32_t idx, uint32_t *look)
{
    uint32_t s;

    if ((uint64_t)(v->n_frames + 1) * 2 > v->look_slot_cap &&
        look_rehash(v, v->look_slot_cap ? v->look_slot_cap * 2 : 64))
        return -1;
    s = (uint32_t)look_hash(f) & (v->look_slot_cap - 1);
    for (; v->look_slots[s]; s = (s + 1) & (v->look_slot_cap - 1)) {
        if (look_equal(&v->frames[v->look_slots[s] - 1].pub, f)) {
            *look = v->look_slots[s] - 1;
            return 0;
        }
    }
    v->look_slots[s] = idx + 1;
    *look = idx;
    return 0;
}

/* Rebuild the frame hash with cap slots (a power of two). */
static int frame_rehash(cpuview *v, uint32_t cap)
{
    uint32_t *slots = trc_calloc(cap, sizeof *slots);
    if (!slots)
        return -1;
    for (uint32_t i = 0; i < v->n_frames; i++) {
        uint32_t s = (uint32_t)frame_hash(&v->frames[i]) & (cap - 1);
        while (slots[s])
            s = (s + 1) & (cap - 1);
        slots[s] = i + 1;
    }
    trc_free(v->frame_slots);
    v->frame_slots = slots;
    v->frame_slot_cap = cap;
    return 0;
}

/* Intern a view frame; *idx gets its index.  -1 when out of memory. */
static int frame_intern(cpuview *v, const vframe *f, uint32_t *idx)
{
    uint32_t s;

    if ((uint64_t)(v->n_frames + 1) * 2 > v->frame_slot_cap &&
        frame_rehash(v, v->frame_slot_cap ? v->frame_slot_cap * 2 : 64))
        return -1;
    s = (uint32_t)frame_hash(f) & (v->frame_slot_cap - 1);
    for (; v->frame_slots[s]; s = (s + 1) & (v->frame_slot_cap - 1)) {
        if (frame_equal(&v->frames[v->frame_slots[s] - 1], f)) {
            *idx = v->frame_slots[s] - 1;
            return 0;
        }
    }
    if (cpuview_grow(&v->frames, &v->cap_frames, v->n_frames + 1, sizeof *v->frames, 16))
        return -1;
    v->frames[v->n_frames] = *f;
    if (find_look(v, &f->pub, v->n_frames, &v->frames[v->n_frames].pub.look))
        return -1;
    v->frame_slots[s] = v->n_frames + 1;
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
        if (cpuview_grow(&v->frame_map, &v->frame_map_cap, id + 1, sizeof *v->frame_map, 16))
            return -1;
        v->frame_map[id] = *idx + 1;
    }
    return 0;
}

static uint64_t stack_hash(uint32_t parent, uint32_t frame)
{
    return hash_u32(hash_u32(0xcbf29ce484222325ull, parent), frame);
}

static int stack_rehash(cpuview *v, uint32_t cap)
{
    uint32_t *slots = trc_calloc(cap, sizeof *slots);
    if (!slots)
        return -1;
    for (uint32_t i = 1; i < v->n_stacks; i++) {
        uint32_t s = (uint32_t)stack_hash(v->stacks[i].parent, v->stacks[i].frame) & (cap - 1);
        while (slots[s])
            s = (s + 1) & (cap - 1);
        slots[s] = i;
    }
    trc_free(v->stack_slots);
    v->stack_slots = slots;
    v->stack_slot_cap = cap;
    return 0;
}

/* Intern view stack (parent, frame).  -1 when out of memory. */
static int stack_intern(cpuview *v, uint32_t parent, uint32_t frame, uint32_t *id)
{
    uint32_t s;

    if ((uint64_t)v->n_stacks * 2 > v->stack_slot_cap &&
        stack_rehash(v, v->stack_slot_cap ? v->stack_slot_cap * 2 : 64))
        return -1;
    s = (uint32_t)stack_hash(parent, frame) & (v->stack_slot_cap - 1);
    for (; v->stack_slots[s]; s = (s + 1) & (v->stack_slot_cap - 1)) {
        const vstack *e = &v->stacks[v->stack_slots[s]];
        if (e->parent == parent && e->frame == frame) {
            *id = v->stack_slots[s];
            return 0;
        }
    }
    if (v->n_stacks == UINT32_MAX ||
        cpuview_grow(&v->stacks, &v->cap_stacks, v->n_stacks + 1, sizeof *v->stacks, 16))
        return -1;
    v->stacks[v->n_stacks].parent = parent;
    v->stacks[v->n_stacks].frame = frame;
    v->stacks[v->n_stacks].depth = v->stacks[parent].depth + 1;
    v->stack_slots[s] = v->n_stacks;
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
        if (cpuview_grow(&v->walk, &v->walk_cap, n + 1, sizeof *v->walk, 16))
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
            if (cpuview_grow(&v->stack_map, &v->stack_map_cap, id + 1, sizeof *v->stack_map, 16))
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

/* Length of at most max bytes of s, not cutting a UTF-8 sequence. */
static size_t utf8_cut(const char *s, size_t max)
{
    size_t n = strlen(s);
    if (n <= max)
        return n;
    while (max > 0 && ((unsigned char)s[max] & 0xC0) == 0x80)
        max--;
    return max;
}

void cpuview_write_process_label(jsonw *f, const trc_process *p, int64_t pid, int with_id)
{
    const char *name = "process";
    size_t n;

    if (p && p->command_line && p->command_line[0]) {
        name = p->command_line;
    } else if (p && p->executable && p->executable[0]) {
        const char *slash = strrchr(p->executable, '/');
        name = slash && slash[1] ? slash + 1 : p->executable;
    }
    n = utf8_cut(name, 80);
    jsonw_str_body(f, name, n);
    if (n < strlen(name))
        jsonw_raw(f, "\\u2026"); /* a JSON-escaped ellipsis marks the cut */
    if (!with_id)
        return;
    jsonw_raw(f, " (pid ");
    jsonw_i64(f, pid);
    jsonw_putc(f, ')');
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
