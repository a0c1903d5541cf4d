/*
 * lib/cupti/launch.c — launch-site Python stacks (contracts in launch.h;
 * docs/design/cupti.md §5; docs/design/cpython.md).
 *
 * Cost matters here: this runs on the application's thread inside every
 * kernel launch.  The walker (lib/py) caches code objects and hands back
 * the same py_frame_info pointer for the same code object and line, so a
 * stack is a short array of pointers; a table keyed on that array gives
 * the interned stack id without touching the writer on a hit.
 */
#include "lib/cupti/launch.h"

#include <string.h>

#include "lib/util/alloc.h"
#include "lib/py/pyproc.h"

#define MAX_DEPTH 1024           /* deeper stacks are reported invalid */
#define PARK_BITS 18
#define PARK_SLOTS (1u << PARK_BITS)
#define CACHE_SLOTS 8192         /* distinct launch stacks remembered */
#define RETRY_NS 100000000LL     /* runtime not initialised yet: look again later */

typedef struct park_slot {
    uint32_t corr;               /* 0 = empty */
    uint32_t stack;
    uint32_t flags;
} park_slot;

typedef struct cache_entry {
    uint64_t hash;
    uint32_t depth;              /* 0 = empty */
    uint32_t stack;
    const py_frame_info **frames;
} cache_entry;

struct cupti_launch {
    py_proc *py;
    int py_state;                /* 0 not tried, 1 attached, -1 given up */
    int64_t retry_at;
    char why[256];
    park_slot *park;
    cache_entry *cache;
    size_t cache_used;
    const py_frame_info *frames[MAX_DEPTH];
    cupti_launch_stats st;
};

cupti_launch *cupti_launch_new(void)
{
    cupti_launch *l = trc_calloc(1, sizeof *l);
    if (!l)
        return NULL;
    l->park = trc_calloc(PARK_SLOTS, sizeof *l->park);
    l->cache = trc_calloc(CACHE_SLOTS, sizeof *l->cache);
    if (!l->park || !l->cache) {
        cupti_launch_free(l);
        return NULL;
    }
    return l;
}

static void cache_clear(cupti_launch *l)
{
    for (size_t i = 0; i < CACHE_SLOTS; i++) {
        trc_free(l->cache[i].frames);
        memset(&l->cache[i], 0, sizeof l->cache[i]);
    }
    l->cache_used = 0;
}

void cupti_launch_free(cupti_launch *l)
{
    if (!l)
        return;
    if (l->cache)
        cache_clear(l);
    trc_free(l->cache);
    trc_free(l->park);
    if (l->py)
        py_proc_free(l->py);
    trc_free(l);
}

/* 1 when the walker is ready for the calling process. */
static int ensure_python(cupti_launch *l)
{
    py_status ps;

    if (l->py_state)
        return l->py_state > 0;
    if (l->retry_at && trc_now_ns() < l->retry_at)
        return 0;
    ps = py_proc_attach_self(&l->py, l->why, sizeof l->why);
    if (ps == PY_OK) {
        l->py_state = 1;
        l->why[0] = 0;
        return 1;
    }
    l->py = NULL;
    if (ps == PY_ERR_NOT_READY)
        l->retry_at = trc_now_ns() + RETRY_NS;
    else
        l->py_state = -1;
    return 0;
}

static uint64_t hash_frames(const py_frame_info **f, int n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (int i = 0; i < n; i++) {
        h ^= (uint64_t)(uintptr_t)f[i];
        h *= 0x100000001b3ull;
        h ^= h >> 29;
    }
    return h;
}

/* Intern frames[0..n) (leaf first) into w; root first as the writer's
 * prefix tree wants. */
static trc_status intern(trc_writer *w, const py_frame_info **f, int n, uint32_t *out)
{
    uint32_t parent = 0;
    for (int i = n - 1; i >= 0; i--) {
        py_frame_info *fi = (py_frame_info *)f[i];  /* user_id is ours to set */
        trc_status st;
        if (!fi->user_id) {
            uint32_t id;
            st = trc_writer_frame(w, TRC_FRAME_PYTHON, fi->function, fi->file, fi->line,
                                  fi->first_line, &id);
            if (st != TRC_OK)
                return st;
            fi->user_id = id;
        }
        st = trc_writer_stack(w, parent, fi->user_id, &parent);
        if (st != TRC_OK)
            return st;
    }
    *out = parent;
    return TRC_OK;
}

static void cache_put(cupti_launch *l, uint64_t h, int n, uint32_t stack)
{
    const py_frame_info **copy;
    size_t i;

    if (l->cache_used >= CACHE_SLOTS / 2)
        cache_clear(l);
    copy = trc_malloc((size_t)n * sizeof *copy);
    if (!copy)
        return;   /* only the cache misses out */
    memcpy(copy, l->frames, (size_t)n * sizeof *copy);
    for (i = h % CACHE_SLOTS; l->cache[i].depth; i = (i + 1) % CACHE_SLOTS)
        ;
    l->cache[i] = (cache_entry){ h, (uint32_t)n, stack, copy };
    l->cache_used++;
}

trc_status cupti_launch_capture(cupti_launch *l, trc_writer *w, uint32_t *stack, uint32_t *flags)
{
    int n;
    uint64_t h;
    trc_status st;

    *stack = 0;
    *flags = 0;
    if (!ensure_python(l)) {
        *flags = TRC_API_NO_PYTHON;
        l->st.no_python++;
        return TRC_OK;
    }
    l->st.captures++;
    n = py_proc_stack_self_thread(l->py, l->frames, MAX_DEPTH);
    if (n < 0) {
        l->st.invalid++;
        return TRC_OK;
    }
    if (n == 0) {
        *flags = TRC_API_NO_PYTHON;
        l->st.no_python++;
        return TRC_OK;
    }
    h = hash_frames(l->frames, n);
    for (size_t i = h % CACHE_SLOTS; l->cache[i].depth; i = (i + 1) % CACHE_SLOTS) {
        cache_entry *e = &l->cache[i];
        if (e->hash == h && e->depth == (uint32_t)n &&
            memcmp(e->frames, l->frames, (size_t)n * sizeof *e->frames) == 0) {
            l->st.cache_hits++;
            *stack = e->stack;
            return TRC_OK;
        }
    }
    st = intern(w, l->frames, n, stack);
    if (st != TRC_OK) {
        *stack = 0;
        return st;
    }
    cache_put(l, h, n, *stack);
    return TRC_OK;
}

void cupti_launch_put(cupti_launch *l, uint32_t corr, uint32_t stack, uint32_t flags)
{
    park_slot *s = &l->park[corr & (PARK_SLOTS - 1)];
    if (s->corr && s->corr != corr)
        l->st.overwritten++;
    *s = (park_slot){ corr, stack, flags };
}

int cupti_launch_take(cupti_launch *l, uint32_t corr, uint32_t *stack, uint32_t *flags)
{
    park_slot *s = &l->park[corr & (PARK_SLOTS - 1)];
    if (!corr || s->corr != corr)
        return 0;
    *stack = s->stack;
    *flags = s->flags;
    s->corr = 0;
    return 1;
}

void cupti_launch_get_stats(const cupti_launch *l, cupti_launch_stats *out)
{
    *out = l->st;
}

const char *cupti_launch_python_status(const cupti_launch *l)
{
    return l->why;
}
