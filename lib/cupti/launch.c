/*
 * lib/cupti/launch.c — launch-site Python stacks (contracts in launch.h;
 * docs/design/cupti.md §5; docs/design/cpython.md).
 *
 * Cost matters here: this runs on the application's thread inside every
 * kernel launch.  The walker (lib/py) caches code objects and hands back
 * the same py_frame_info pointer for the same code object and line, so a
 * stack is a short array of pointers; a table keyed on that array gives
 * the stack's reference without touching anything else on a hit.
 *
 * Locking.  The launch path must not wait for the flusher, which holds
 * the injection's big lock for as long as it decodes a 4 MiB buffer and
 * compresses chunks.  So this module has its own small lock, held only
 * to walk, look up the cache and park; a stack never seen before is
 * copied out of the walker (whose cache may evict the code objects'
 * strings later) and interned into the writer by the flusher
 * (cupti_launch_resolve), before it decodes the buffer whose API records
 * take it back.
 */
#include "lib/cupti/launch.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "lib/util/alloc.h"
#include "lib/util/grow.h"
#include "lib/py/pyproc.h"

#define MAX_DEPTH 1024           /* deeper stacks are reported invalid */
#define PARK_BITS 18
#define PARK_SLOTS (1u << PARK_BITS)
#define CACHE_SLOTS 8192         /* distinct launch stacks remembered */
#define RETRY_NS 100000000LL     /* runtime not initialised yet: look again later */
#define NO_PYTHON_RECHECK_NS 100000000LL   /* a thread without Python: look again after */
#define GRAPH_SLOTS 256          /* graph ids waiting for their API records */

typedef struct park_slot {
    uint32_t corr;               /* 0 = empty */
    uint32_t stack;              /* interned id, when ref is 0 */
    uint32_t ref;                /* 1 + index into stacks, 0 = none */
    uint32_t flags;
    uint32_t capture_ns;         /* time the capture took inside the call */
    uint32_t tid;                /* the launching thread's kernel id, 0 = unknown */
} park_slot;

typedef struct graph_slot {
    uint32_t corr;               /* 0 = empty */
    uint32_t graph, graph_exec;
} graph_slot;

typedef struct cache_entry {
    uint64_t hash;
    uint32_t depth;              /* 0 = empty */
    uint32_t ref;
    const py_frame_info **frames;
} cache_entry;

/* A frame copied out of the walker for the flusher to intern. */
typedef struct copied_frame {
    char *function, *file;
    uint32_t line, first_line;
} copied_frame;

/* One distinct stack met at a launch.  frames (leaf first) belong to the
 * flusher's cupti_launch_resolve from the moment they are stored: it
 * reads them outside the lock, then sets id and frees them. */
typedef struct launch_stack {
    uint32_t id;                 /* interned stack id once resolved */
    uint32_t n;
    copied_frame *frames;        /* NULL once resolved */
} launch_stack;

/* Per thread: "no Python here", as found by the last walk.  Threads that
 * never run Python (autograd's workers, NCCL's) launch often, and each
 * walk of theirs reads the whole thread list to learn again that they
 * are not in it; a thread may start running Python later (a C thread
 * calling PyGILState_Ensure), hence the recheck.  Keyed by the launch
 * module's id, so a new one starts afresh. */
static __thread struct {
    uint64_t owner;
    int64_t until_ns;
} tls_no_python;

static atomic_uint_fast64_t next_id = 1;

struct cupti_launch {
    uint64_t id;                 /* for tls_no_python */
    pthread_mutex_t mu;          /* everything below */
    launch_stack *stacks;
    size_t n_stacks, cap_stacks, resolved;   /* stacks[0..resolved) have ids */
    py_proc *py;
    int py_state;                /* 0 not tried, 1 attached, -1 given up */
    int64_t retry_at;
    char why[256];
    park_slot *park;
    graph_slot graphs[GRAPH_SLOTS];
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
    l->id = atomic_fetch_add(&next_id, 1);
    pthread_mutex_init(&l->mu, NULL);
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

static void copied_free(copied_frame *f, uint32_t n)
{
    if (!f)
        return;
    for (uint32_t i = 0; i < n; i++) {
        trc_free(f[i].function);
        trc_free(f[i].file);
    }
    trc_free(f);
}

void cupti_launch_free(cupti_launch *l)
{
    if (!l)
        return;
    if (l->cache)
        cache_clear(l);
    for (size_t i = 0; i < l->n_stacks; i++)
        copied_free(l->stacks[i].frames, l->stacks[i].n);
    trc_free(l->stacks);
    pthread_mutex_destroy(&l->mu);
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

/* Intern f[0..n) (leaf first) into w; root first as the writer's
 * prefix tree wants.  The writer deduplicates frames and stacks. */
static trc_status intern(trc_writer *w, const copied_frame *f, uint32_t n, uint32_t *out)
{
    uint32_t parent = 0;
    for (uint32_t i = n; i-- > 0;) {
        uint32_t id;
        trc_status st = trc_writer_frame(w, TRC_FRAME_PYTHON, f[i].function, f[i].file,
                                         f[i].line, f[i].first_line, &id);
        if (st != TRC_OK)
            return st;
        st = trc_writer_stack(w, parent, id, &parent);
        if (st != TRC_OK)
            return st;
    }
    *out = parent;
    return TRC_OK;
}

/* Called with l->mu held: a new stack, copied from l->frames[0..n).
 * Returns its ref, 0 when out of memory (the launch goes without). */
static uint32_t stack_add(cupti_launch *l, int n)
{
    copied_frame *f;
    launch_stack *s;

    if (l->n_stacks >= UINT32_MAX - 1 ||
        trcu_grow((void **)&l->stacks, &l->cap_stacks, l->n_stacks, sizeof *l->stacks) != TRC_OK)
        return 0;
    f = trc_calloc((size_t)n, sizeof *f);
    if (!f)
        return 0;
    for (int i = 0; i < n; i++) {
        f[i].function = trc_strdup(l->frames[i]->function ? l->frames[i]->function : "");
        f[i].file = trc_strdup(l->frames[i]->file ? l->frames[i]->file : "");
        f[i].line = l->frames[i]->line;
        f[i].first_line = l->frames[i]->first_line;
        if (!f[i].function || !f[i].file) {
            copied_free(f, (uint32_t)n);
            return 0;
        }
    }
    s = &l->stacks[l->n_stacks++];
    s->id = 0;
    s->n = (uint32_t)n;
    s->frames = f;
    return (uint32_t)l->n_stacks;
}

static void cache_put(cupti_launch *l, uint64_t h, int n, uint32_t ref)
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
    l->cache[i] = (cache_entry){ h, (uint32_t)n, ref, copy };
    l->cache_used++;
}

/* Called with l->mu held. */
static void capture_locked(cupti_launch *l, uint32_t *ref, uint32_t *flags)
{
    int n;
    uint64_t h;

    if (!ensure_python(l) ||
        (tls_no_python.owner == l->id && trc_now_ns() < tls_no_python.until_ns)) {
        *flags = TRC_API_NO_PYTHON;
        l->st.no_python++;
        return;
    }
    l->st.captures++;
    n = py_proc_stack_self_thread(l->py, l->frames, MAX_DEPTH);
    if (n < 0) {
        /* a pointer the careful reader refused, or a torn stack: the
         * call goes without, and says so (spec [R-API-4]) */
        *flags = TRC_API_UNREADABLE;
        l->st.invalid++;
        return;
    }
    if (n == 0) {
        tls_no_python.owner = l->id;
        tls_no_python.until_ns = trc_now_ns() + NO_PYTHON_RECHECK_NS;
        *flags = TRC_API_NO_PYTHON;
        l->st.no_python++;
        return;
    }
    h = hash_frames(l->frames, n);
    for (size_t i = h % CACHE_SLOTS; l->cache[i].depth; i = (i + 1) % CACHE_SLOTS) {
        cache_entry *e = &l->cache[i];
        if (e->hash == h && e->depth == (uint32_t)n &&
            memcmp(e->frames, l->frames, (size_t)n * sizeof *e->frames) == 0) {
            l->st.cache_hits++;
            *ref = e->ref;
            return;
        }
    }
    *ref = stack_add(l, n);
    if (*ref)
        cache_put(l, h, n, *ref);
}

void cupti_launch_capture(cupti_launch *l, uint32_t *ref, uint32_t *flags)
{
    *ref = 0;
    *flags = 0;
    pthread_mutex_lock(&l->mu);
    capture_locked(l, ref, flags);
    pthread_mutex_unlock(&l->mu);
}

trc_status cupti_launch_resolve(cupti_launch *l, trc_writer *w)
{
    trc_status st = TRC_OK;

    for (;;) {
        size_t i;
        launch_stack s = { 0, 0, NULL };
        uint32_t id = 0;
        int more;

        pthread_mutex_lock(&l->mu);
        i = l->resolved;
        more = i < l->n_stacks;
        if (more)
            s = l->stacks[i];
        pthread_mutex_unlock(&l->mu);
        if (!more)
            return st;
        /* outside the lock: the launch path may append (and move the
         * array) meanwhile, but never touches s.frames */
        if (st == TRC_OK)
            st = intern(w, s.frames, s.n, &id);
        copied_free(s.frames, s.n);
        pthread_mutex_lock(&l->mu);
        l->stacks[i].id = st == TRC_OK ? id : 0;
        l->stacks[i].frames = NULL;
        l->resolved = i + 1;
        pthread_mutex_unlock(&l->mu);
    }
}

void cupti_launch_park(cupti_launch *l, uint32_t corr, uint32_t ref, uint32_t flags,
                       uint32_t capture_ns, uint32_t tid)
{
    pthread_mutex_lock(&l->mu);
    park_slot *s = &l->park[corr & (PARK_SLOTS - 1)];
    if (s->corr && s->corr != corr)
        l->st.overwritten++;
    *s = (park_slot){ corr, 0, ref, flags, capture_ns, tid };
    pthread_mutex_unlock(&l->mu);
}

void cupti_launch_put(cupti_launch *l, uint32_t corr, uint32_t stack, uint32_t flags,
                      uint32_t capture_ns, uint32_t tid)
{
    pthread_mutex_lock(&l->mu);
    park_slot *s = &l->park[corr & (PARK_SLOTS - 1)];
    if (s->corr && s->corr != corr)
        l->st.overwritten++;
    *s = (park_slot){ corr, stack, 0, flags, capture_ns, tid };
    pthread_mutex_unlock(&l->mu);
}

int cupti_launch_take(cupti_launch *l, uint32_t corr, uint32_t *stack, uint32_t *flags,
                      uint32_t *capture_ns, uint32_t *tid)
{
    int found = 0;

    pthread_mutex_lock(&l->mu);
    park_slot *s = &l->park[corr & (PARK_SLOTS - 1)];
    if (corr && s->corr == corr) {
        /* a ref not resolved yet (its launch came after the last
         * resolve) gives no stack rather than a wrong one */
        *stack = !s->ref ? s->stack : s->ref <= l->resolved ? l->stacks[s->ref - 1].id : 0;
        *flags = s->flags;
        *capture_ns = s->capture_ns;
        *tid = s->tid;
        s->corr = 0;
        found = 1;
    }
    pthread_mutex_unlock(&l->mu);
    return found;
}

void cupti_launch_graph(cupti_launch *l, uint32_t corr, uint32_t graph, uint32_t graph_exec)
{
    pthread_mutex_lock(&l->mu);
    l->graphs[corr % GRAPH_SLOTS] = (graph_slot){ corr, graph, graph_exec };
    pthread_mutex_unlock(&l->mu);
}

int cupti_launch_take_graph(cupti_launch *l, uint32_t corr, uint32_t *graph,
                            uint32_t *graph_exec)
{
    int found = 0;

    pthread_mutex_lock(&l->mu);
    graph_slot *s = &l->graphs[corr % GRAPH_SLOTS];
    if (corr && s->corr == corr) {
        *graph = s->graph;
        *graph_exec = s->graph_exec;
        s->corr = 0;
        found = 1;
    }
    pthread_mutex_unlock(&l->mu);
    return found;
}

void cupti_launch_get_stats(cupti_launch *l, cupti_launch_stats *out)
{
    pthread_mutex_lock(&l->mu);
    *out = l->st;
    if (l->py) {
        py_proc_stats ps;
        py_proc_get_stats(l->py, &ps);
        out->thread_lists = ps.thread_lists_full + ps.thread_lists_steady;
    }
    pthread_mutex_unlock(&l->mu);
}

const char *cupti_launch_python_status(const cupti_launch *l)
{
    return l->why;
}
