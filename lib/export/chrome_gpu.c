/*
 * lib/export/chrome_gpu.c — Chrome Trace Event exporter, GPU half (see
 * chrome.h for the layout users see; FORMATS.md §2 for the format):
 * GPU activities, CUDA API calls, markers, and the flows between launches
 * and their activities.
 *
 * Tracks.  Every interval goes to a track:
 *   - per GPU device a pseudo-process (pid CHR_GPU_PID + device), in it
 *     one track per stream (kernels, copies, memsets) and one per stream
 *     for synchronisations (which span the work they wait for, so on the
 *     stream's own track they would swallow it);
 *   - per calling thread a "CUDA API" track in the thread's process;
 *   - per thread (or per process, for process-wide ones) a "markers"
 *     track for NVTX ranges and instants.
 * API calls and ranges never go on the thread's own track: they cut
 * across the sampled flame slices there, which must nest.
 *
 * Nesting.  Viewers need the X slices of one (pid, tid) to nest.  Records
 * arrive in file order, which is nearly but not exactly start order
 * (CUPTI writes an API call when it returns, so a runtime call comes
 * after the driver call inside it).  Each track holds a window of the
 * last WINDOW slices in a heap and releases them in start order
 * (longest first at equal starts).  A released slice goes to the first
 * lane of its track where it nests (it starts no earlier than the lane's
 * last slice and lies inside or after each slice still open there);
 * otherwise a new lane, another tid named "... (2)", takes it.  So the
 * output always nests (up to MAX_LANES lanes per track; beyond that, which
 * takes input crafted to defeat the window, slices may overlap).
 * Zero-length intervals are skipped: they hold no time.
 *
 * Flows (v2).  A launch API call (TRC_API_LAUNCH) and the kernel, copy or
 * memset carrying its correlation id (same process) get one "bind_id":
 * the call "flow_out":true, the activity "flow_in":true.  Perfetto binds
 * such a flow to exactly the slices carrying it, whatever else is open
 * there, which v1 "s"/"f" events (bound by timestamp) cannot promise.  A
 * slice is written once its partner is known, so a placed slice whose
 * partner has not arrived waits (memory: launches in flight, plus
 * launches or activities whose partner never comes, written unlinked at
 * the end or when more than WAIT_MAX wait, oldest first).  A launch call
 * inside another (the driver call a runtime launch makes, with an id of
 * its own) does not wait: the outer call is the one that links.  A flow is only drawn when the call starts before the
 * activity (Perfetto processes slices in time order).
 */
#include <string.h>

#include "format/alloc.h"
#include "lib/export/chrome_int.h"
#include "lib/export/nvvp_units.h"

enum { TK_STREAM, TK_SYNC, TK_API, TK_MARKS };

#define WINDOW 64       /* slices held back per track for reordering */
#define WAIT_MAX 65536  /* slices waiting for a flow partner, at most */
#define MAX_LANES 64
#define NO_STREAM UINT32_MAX

typedef struct gslice {
    int64_t start, end;
    uint64_t seq;        /* arrival order: ties keep it */
    trc_event_type type;
    union {
        trc_gpu_kernel k;
        trc_gpu_memcpy m;
        trc_gpu_memset s;
        trc_gpu_sync y;
        trc_api_call a;
        trc_marker mk;
    } u;
} gslice;

typedef struct lane {
    int64_t tid;
    int64_t base_ns;     /* its first slice's start: speedscope's zero */
    int has_base;
    int64_t last_start;
    struct lopen {       /* the slices open at last_start, outermost first */
        int64_t end;
        int launch;      /* a launch API call */
    } *open;
    uint32_t depth, cap;
} lane;

typedef struct pushed {  /* an open PUSH marker */
    trc_marker m;
} pushed;

typedef struct gtrack {
    uint32_t kind;       /* TK_* */
    int64_t pid;         /* pid of its events */
    int64_t owner;       /* the process whose work it shows */
    uint32_t device, context, stream; /* TK_STREAM, TK_SYNC */
    uint32_t thread;     /* TK_API, TK_MARKS: reader thread id, 0 = process-wide */
    struct hent {        /* reorder window: a min-heap in start order */
        int64_t start, end;
        uint64_t seq;
        uint32_t slot;   /* the slice: pool[slot] */
    } *heap;
    uint32_t n_heap, cap_heap;
    gslice *pool;        /* the window's slices (moving them costs more than indices) */
    uint32_t n_pool, cap_pool;
    uint32_t *free_slots;
    uint32_t n_free, cap_free;
    lane *lanes;
    uint32_t n_lanes, cap_lanes;
    pushed *push;
    uint32_t n_push, cap_push;
} gtrack;

typedef struct waiter {  /* a placed slice waiting for its flow partner */
    gslice s;
    uint32_t track;
    int64_t tid, base_ns;
    int done;
} waiter;

struct chr_gpu {
    gtrack *tracks;      /* in order of creation */
    uint32_t n_tracks, cap_tracks;
    uint32_t *slots;     /* track hash: index + 1, 0 = empty */
    uint32_t slot_cap;
    uint32_t *devices;   /* GPU devices shown, in order of first use */
    uint32_t n_devices, cap_devices;
    waiter *wait;        /* in order of placing */
    uint32_t n_wait, cap_wait, n_done;
    uint32_t oldest;     /* no waiter before this index is still waiting */
    uint64_t *wkeys;     /* (owner pid, correlation) -> waiter index + 1 */
    uint32_t *wvals;
    uint32_t wcap, wn;
    uint64_t seq, n_flows;
    int64_t next_tid;
    const char **nkeys;  /* name cache: string (reader-owned) -> its JSON text */
    char **ntext;        /* "\"escaped\"" */
    uint32_t *nlen;
    uint32_t ncap, nn;
    char **site;         /* by reader stack id: ,"call_site":"..." text, NUL-ended */
    uint32_t cap_site;
};

chr_gpu *chr_gpu_new(void)
{
    chr_gpu *g = trc_calloc(1, sizeof *g);
    if (g)
        g->next_tid = CHR_SYNTH_TID;
    return g;
}

void chr_gpu_free(chr_gpu *g)
{
    if (!g)
        return;
    for (uint32_t i = 0; i < g->n_tracks; i++) {
        gtrack *t = &g->tracks[i];
        for (uint32_t l = 0; l < t->n_lanes; l++)
            trc_free(t->lanes[l].open);
        trc_free(t->lanes);
        trc_free(t->heap);
        trc_free(t->pool);
        trc_free(t->free_slots);
        trc_free(t->push);
    }
    trc_free(g->tracks);
    trc_free(g->slots);
    trc_free(g->devices);
    trc_free(g->wait);
    trc_free(g->wkeys);
    trc_free(g->wvals);
    for (uint32_t i = 0; i < g->ncap; i++)
        trc_free(g->ntext[i]);
    trc_free(g->nkeys);
    trc_free(g->ntext);
    trc_free(g->nlen);
    for (uint32_t i = 0; i < g->cap_site; i++)
        trc_free(g->site[i]);
    trc_free(g->site);
    trc_free(g);
}

/* ---- tracks ------------------------------------------------------------ */

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

static uint64_t track_hash(uint32_t kind, int64_t owner, uint32_t device, uint32_t context,
                           uint32_t stream, uint32_t thread)
{
    uint64_t h = mix(kind, (uint64_t)owner);
    h = mix(h, ((uint64_t)device << 32) | context);
    return mix(h, ((uint64_t)stream << 32) | thread);
}

static int track_rehash(chr_gpu *g, uint32_t cap)
{
    uint32_t *slots = trc_calloc(cap, sizeof *slots);
    if (!slots)
        return -1;
    for (uint32_t i = 0; i < g->n_tracks; i++) {
        const gtrack *t = &g->tracks[i];
        uint32_t s = (uint32_t)track_hash(t->kind, t->owner, t->device, t->context, t->stream,
                                          t->thread) & (cap - 1);
        while (slots[s])
            s = (s + 1) & (cap - 1);
        slots[s] = i + 1;
    }
    trc_free(g->slots);
    g->slots = slots;
    g->slot_cap = cap;
    return 0;
}

int64_t chr_gpu_pid(chrome *c, uint32_t device)
{
    chr_gpu *g = c->gpu;

    for (uint32_t i = 0; i < g->n_devices; i++)
        if (g->devices[i] == device)
            return CHR_GPU_PID + (int64_t)(device & 0xffff);
    if (cpuview_grow(&g->devices, &g->cap_devices, g->n_devices + 1, sizeof *g->devices, 16)) {
        chr_fail(c, "device table");
        return -1;
    }
    g->devices[g->n_devices++] = device;
    return CHR_GPU_PID + (int64_t)(device & 0xffff);
}

static int64_t track_fail(chrome *c, const char *what)
{
    chr_fail(c, what);
    return -1;
}

/* The track with this key, created on first use; its index, or -1 when
 * out of memory (c->err set). */
static int64_t get_track(chrome *c, uint32_t kind, int64_t owner, uint32_t device,
                         uint32_t context, uint32_t stream, uint32_t thread)
{
    chr_gpu *g = c->gpu;
    uint32_t s;
    gtrack *t;

    if ((uint64_t)(g->n_tracks + 1) * 2 > g->slot_cap &&
        track_rehash(g, g->slot_cap ? g->slot_cap * 2 : 64))
        return track_fail(c, "track table");
    s = (uint32_t)track_hash(kind, owner, device, context, stream, thread) & (g->slot_cap - 1);
    for (; g->slots[s]; s = (s + 1) & (g->slot_cap - 1)) {
        t = &g->tracks[g->slots[s] - 1];
        if (t->kind == kind && t->owner == owner && t->device == device &&
            t->context == context && t->stream == stream && t->thread == thread)
            return g->slots[s] - 1;
    }
    if (cpuview_grow(&g->tracks, &g->cap_tracks, g->n_tracks + 1, sizeof *g->tracks, 16))
        return track_fail(c, "track table");
    t = &g->tracks[g->n_tracks];
    memset(t, 0, sizeof *t);
    t->kind = kind;
    t->owner = owner;
    t->device = device;
    t->context = context;
    t->stream = stream;
    t->thread = thread;
    if (kind == TK_STREAM || kind == TK_SYNC) {
        t->pid = chr_gpu_pid(c, device);
        if (t->pid < 0)
            return -1;
    } else {
        t->pid = owner;
        if (chr_note_pid(c, owner))
            return track_fail(c, "process table");
    }
    g->slots[s] = g->n_tracks + 1;
    return g->n_tracks++;
}

/* A thread id for a new lane of t: a stream's own number for its first
 * lane when that is free on the device, else an invented one. */
static int64_t lane_tid(chr_gpu *g, const gtrack *t)
{
    if (t->kind == TK_STREAM && t->n_lanes == 0 && t->stream > 0 && t->stream < CHR_SYNTH_TID) {
        int taken = 0;
        for (uint32_t i = 0; i < g->n_tracks && !taken; i++) {
            const gtrack *o = &g->tracks[i];
            taken = o != t && o->kind == TK_STREAM && o->device == t->device && o->n_lanes &&
                    o->lanes[0].tid == (int64_t)t->stream;
        }
        if (!taken)
            return t->stream;
    }
    return g->next_tid++;
}

/* Add a lane to t; its index, or -1 when out of memory.  start is the
 * first slice's, or INT64_MIN for a lane opened by an instant. */
static int64_t new_lane(chr_gpu *g, gtrack *t, int64_t start)
{
    lane *l;
    int64_t tid = lane_tid(g, t);

    if (cpuview_grow(&t->lanes, &t->cap_lanes, t->n_lanes + 1, sizeof *t->lanes, 16))
        return -1;
    l = &t->lanes[t->n_lanes];
    memset(l, 0, sizeof *l);
    l->tid = tid;
    l->last_start = start;
    return t->n_lanes++;
}

/* 1 if [start, end) nests on lane l (see the top comment). */
static int lane_fits(const lane *l, int64_t start, int64_t end)
{
    uint32_t d = l->depth;

    if (start < l->last_start)
        return 0;
    while (d > 0 && l->open[d - 1].end <= start)
        d--; /* ended before this one starts */
    return d == 0 || l->open[d - 1].end >= end;
}

static int is_launch(const gslice *s)
{
    return s->type == TRC_EV_API_CALL && (s->u.a.flags & TRC_API_LAUNCH);
}

/* Put s on a lane of t; returns the lane index or -1 when out of memory.
 * *in_launch: s lies inside a launch API call (the driver call a runtime
 * launch makes). */
static int64_t place(chr_gpu *g, gtrack *t, const gslice *s, int *in_launch)
{
    int64_t li = -1;
    lane *l;

    for (uint32_t i = 0; i < t->n_lanes && li < 0; i++)
        if (lane_fits(&t->lanes[i], s->start, s->end))
            li = i;
    if (li < 0)
        li = t->n_lanes < MAX_LANES ? new_lane(g, t, s->start) : (int64_t)t->n_lanes - 1;
    if (li < 0)
        return -1;
    l = &t->lanes[li];
    while (l->depth > 0 && l->open[l->depth - 1].end <= s->start)
        l->depth--;
    if (l->depth > 0 && l->open[l->depth - 1].end < s->end)
        l->depth = 0; /* the MAX_LANES fallback: start over rather than mis-stack */
    if (cpuview_grow(&l->open, &l->cap, l->depth + 1, sizeof *l->open, 16))
        return -1;
    *in_launch = l->depth > 0 && l->open[l->depth - 1].launch;
    l->open[l->depth].end = s->end;
    l->open[l->depth].launch = is_launch(s);
    l->depth++;
    if (!l->has_base) {
        l->has_base = 1;
        l->base_ns = s->start;
    }
    if (s->start > l->last_start)
        l->last_start = s->start;
    return li;
}

/* ---- the reorder window ------------------------------------------------ */

static int before(const struct hent *a, const struct hent *b)
{
    if (a->start != b->start)
        return a->start < b->start;
    if (a->end != b->end)
        return a->end > b->end; /* the longer first: it is the parent */
    return a->seq < b->seq;
}

static void heap_up(struct hent *h, uint32_t i)
{
    struct hent x = h[i];
    while (i > 0 && before(&x, &h[(i - 1) / 2])) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = x;
}

/* Remove the first slice of t's window into *out (its slot is freed;
 * the free list has room: it never holds more than the pool). */
static void heap_pop(gtrack *t, gslice *out)
{
    struct hent *h = t->heap, x;
    uint32_t n = --t->n_heap, i = 0;

    *out = t->pool[h[0].slot];
    t->free_slots[t->n_free++] = h[0].slot;
    if (n == 0)
        return;
    x = h[n];
    for (;;) {
        uint32_t k = 2 * i + 1;
        if (k >= n)
            break;
        if (k + 1 < n && before(&h[k + 1], &h[k]))
            k++;
        if (!before(&h[k], &x))
            break;
        h[i] = h[k];
        i = k;
    }
    h[i] = x;
}

/* ---- flows ------------------------------------------------------------- */

enum { ROLE_NONE, ROLE_OUT, ROLE_IN };

static int flow_role(const gslice *s, uint32_t *corr, int64_t *owner)
{
    switch (s->type) {
    case TRC_EV_API_CALL:
        *corr = s->u.a.correlation;
        return (s->u.a.flags & TRC_API_LAUNCH) && *corr ? ROLE_OUT : ROLE_NONE;
    case TRC_EV_GPU_KERNEL:
        *corr = s->u.k.where.correlation;
        *owner = s->u.k.where.pid;
        return *corr ? ROLE_IN : ROLE_NONE;
    case TRC_EV_GPU_MEMCPY:
        *corr = s->u.m.where.correlation;
        *owner = s->u.m.where.pid;
        return *corr ? ROLE_IN : ROLE_NONE;
    case TRC_EV_GPU_MEMSET:
        *corr = s->u.s.where.correlation;
        *owner = s->u.s.where.pid;
        return *corr ? ROLE_IN : ROLE_NONE;
    default:
        return ROLE_NONE;
    }
}

static uint64_t wkey(int64_t owner, uint32_t corr)
{
    return ((uint64_t)(uint32_t)owner << 32) | corr;
}

static uint32_t wslot(const chr_gpu *g, uint64_t key)
{
    return (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 32) & (g->wcap - 1);
}

/* Waiter index + 1 for key, or 0. */
static uint32_t wget(const chr_gpu *g, uint64_t key)
{
    if (!g->wcap)
        return 0;
    for (uint32_t s = wslot(g, key); g->wvals[s]; s = (s + 1) & (g->wcap - 1))
        if (g->wkeys[s] == key)
            return g->wvals[s];
    return 0;
}

static void wput_raw(chr_gpu *g, uint64_t key, uint32_t val)
{
    uint32_t s = wslot(g, key);
    while (g->wvals[s])
        s = (s + 1) & (g->wcap - 1);
    g->wkeys[s] = key;
    g->wvals[s] = val;
    g->wn++;
}

/* The map key of waiter w. */
static void wrole_key(const chr_gpu *g, const waiter *w, uint64_t *key)
{
    uint32_t corr = 0;
    int64_t owner = g->tracks[w->track].owner; /* API calls: the track's process */

    flow_role(&w->s, &corr, &owner);
    *key = wkey(owner, corr);
}

/* Rebuild the map with cap slots from the waiters not done. */
static int wrebuild(chr_gpu *g, uint32_t cap)
{
    uint64_t *keys = trc_calloc(cap, sizeof *keys);
    uint32_t *vals = trc_calloc(cap, sizeof *vals);

    if (!keys || !vals) {
        trc_free(keys);
        trc_free(vals);
        return -1;
    }
    trc_free(g->wkeys);
    trc_free(g->wvals);
    g->wkeys = keys;
    g->wvals = vals;
    g->wcap = cap;
    g->wn = 0;
    for (uint32_t i = 0; i < g->n_wait; i++) {
        uint64_t key;
        if (g->wait[i].done)
            continue;
        wrole_key(g, &g->wait[i], &key);
        wput_raw(g, key, i + 1);
    }
    return 0;
}

/* Remove key (backward-shift deletion keeps probe chains whole). */
static void wdel(chr_gpu *g, uint64_t key)
{
    uint32_t s = wslot(g, key);

    while (g->wvals[s] && g->wkeys[s] != key)
        s = (s + 1) & (g->wcap - 1);
    if (!g->wvals[s])
        return;
    g->wvals[s] = 0;
    g->wn--;
    for (uint32_t j = (s + 1) & (g->wcap - 1); g->wvals[j]; j = (j + 1) & (g->wcap - 1)) {
        uint32_t home = wslot(g, g->wkeys[j]);
        /* move j back to s unless its home lies cyclically in (s, j] */
        if ((j > s && (home <= s || home > j)) || (j < s && home <= s && home > j)) {
            g->wkeys[s] = g->wkeys[j];
            g->wvals[s] = g->wvals[j];
            g->wvals[j] = 0;
            s = j;
        }
    }
}

/* ---- writing ----------------------------------------------------------- */

static uint32_t nslot(const chr_gpu *g, const char *key)
{
    return (uint32_t)(((uint64_t)(uintptr_t)key * 0x9e3779b97f4a7c15ull) >> 32) & (g->ncap - 1);
}

static int ncache_grow(chr_gpu *g)
{
    uint32_t cap = g->ncap ? g->ncap * 2 : 64;
    const char **keys = trc_calloc(cap, sizeof *keys);
    char **text = trc_calloc(cap, sizeof *text);
    uint32_t *len = trc_calloc(cap, sizeof *len);
    uint32_t old = g->ncap;

    if (!keys || !text || !len) {
        trc_free(keys);
        trc_free(text);
        trc_free(len);
        return -1;
    }
    for (uint32_t i = 0; i < old; i++) {
        uint32_t s;
        if (!g->ntext[i])
            continue;
        g->ncap = cap; /* nslot uses the new size */
        s = nslot(g, g->nkeys[i]);
        while (text[s])
            s = (s + 1) & (cap - 1);
        keys[s] = g->nkeys[i];
        text[s] = g->ntext[i];
        len[s] = g->nlen[i];
    }
    trc_free(g->nkeys);
    trc_free(g->ntext);
    trc_free(g->nlen);
    g->nkeys = keys;
    g->ntext = text;
    g->nlen = len;
    g->ncap = cap;
    return 0;
}

/* Write str as a JSON string.  Names repeat (kernel and API names are
 * interned by the reader: one pointer per name), so each is escaped once
 * and kept by pointer.  -1 when out of memory. */
static int write_name(chr_gpu *g, jsonw *w, const char *str)
{
    uint32_t s;
    size_t n;
    char *t;

    if ((uint64_t)(g->nn + 1) * 2 > g->ncap && ncache_grow(g))
        return -1;
    for (s = nslot(g, str); g->ntext[s]; s = (s + 1) & (g->ncap - 1)) {
        if (g->nkeys[s] == str) {
            jsonw_bytes(w, g->ntext[s], g->nlen[s]);
            return 0;
        }
    }
    n = strlen(str);
    if (n > UINT32_MAX / 8 || !(t = trc_malloc(6 * n + 2)))
        return -1;
    t[0] = '"';
    n = 1 + jsonw_escape(t + 1, str, n);
    t[n++] = '"';
    g->nkeys[s] = str;
    g->ntext[s] = t;
    g->nlen[s] = (uint32_t)n;
    g->nn++;
    jsonw_bytes(w, t, n);
    return 0;
}

static void write_i64_arg(jsonw *w, const char *key, int64_t v)
{
    jsonw_raw(w, key);
    jsonw_i64(w, v);
}

static void write_where(jsonw *w, const trc_gpu_where *wh)
{
    write_i64_arg(w, "\"correlation\":", wh->correlation);
    write_i64_arg(w, ",\"process\":", wh->pid);
    write_i64_arg(w, ",\"device\":", wh->device);
    write_i64_arg(w, ",\"context\":", wh->context);
    if (wh->stream != NO_STREAM)
        write_i64_arg(w, ",\"stream\":", wh->stream);
}

static void write_dim3(jsonw *w, const char *key, const uint32_t v[3])
{
    jsonw_raw(w, key);
    jsonw_putc(w, '[');
    for (int i = 0; i < 3; i++) {
        if (i)
            jsonw_putc(w, ',');
        jsonw_u64(w, v[i]);
    }
    jsonw_putc(w, ']');
}

static const char *sync_name(trc_sync_kind k)
{
    switch (k) {
    case TRC_SYNC_EVENT: return "[CUDA sync Event]";
    case TRC_SYNC_STREAM_WAIT_EVENT: return "[CUDA sync Stream Wait Event]";
    case TRC_SYNC_STREAM: return "[CUDA sync Stream]";
    case TRC_SYNC_CONTEXT: return "[CUDA sync Context]";
    default: return "[CUDA sync Unknown]";
    }
}

static const char *api_cat(trc_api_domain d)
{
    return d == TRC_API_RUNTIME ? "cuda_runtime" : d == TRC_API_DRIVER ? "cuda_driver" : "cuda_api";
}

/* ,"call_site":"function (file:line)" of the leaf frame of reader stack
 * id, built once per stack.  -1 when out of memory. */
static int write_call_site(chr_gpu *g, jsonw *w, const trc_reader *r, uint32_t stack)
{
    const trc_stack *st;
    const trc_frame *f;
    size_t nf, nfile;
    char *p;

    if (stack < g->cap_site && g->site[stack]) {
        jsonw_raw(w, g->site[stack]);
        return 0;
    }
    if (stack == UINT32_MAX || cpuview_grow(&g->site, &g->cap_site, stack + 1, sizeof *g->site, 16))
        return -1;
    st = trc_reader_stack(r, stack);
    f = st ? trc_reader_frame(r, st->frame) : NULL;
    nf = f ? strlen(f->function) : 0;
    nfile = f ? strlen(f->file) : 0;
    p = g->site[stack] = trc_malloc(6 * (nf + nfile) + 48);
    if (!p)
        return -1;
    p += sprintf(p, ",\"call_site\":\"");
    if (f) {
        p += jsonw_escape(p, f->function, nf);
        p += sprintf(p, " (");
        p += jsonw_escape(p, f->file, nfile);
        p += sprintf(p, ":%u)\"", (unsigned)f->line);
    } else {
        p += sprintf(p, "<unknown>\"");
    }
    jsonw_raw(w, g->site[stack]);
    return 0;
}

static void write_marker_args(jsonw *w, const trc_marker *m)
{
    static const char hex[] = "0123456789abcdef";

    jsonw_raw(w, "\"domain\":");
    jsonw_str(w, m->domain);
    if (m->color) {
        char col[10] = "\"#000000\"";
        for (int i = 0; i < 6; i++)
            col[7 - i] = hex[(m->color >> (4 * i)) & 15];
        jsonw_raw(w, ",\"color\":");
        jsonw_bytes(w, col, 9);
    }
    if (m->id) {
        jsonw_raw(w, ",\"id\":");
        jsonw_u64(w, m->id);
    }
}

/* {"ph":"X" ... } of slice s on (pid, tid); bind != 0 adds its flow end.
 * TRC_OK or TRC_ERR_NOMEM (c->err set). */
static trc_status write_gslice(chrome *c, const trc_reader *r, int64_t pid, int64_t tid,
                         int64_t base_ns, const gslice *s, uint64_t bind, int role)
{
    jsonw *w = &c->w;
    const char *name = NULL, *cat = "gpu";

    switch (s->type) {
    case TRC_EV_GPU_KERNEL:
        name = s->u.k.name && s->u.k.name[0] ? s->u.k.name : "<unknown kernel>";
        cat = "kernel";
        break;
    case TRC_EV_GPU_MEMCPY:
        name = nvvp_copy_name(s->u.m.copy_kind);
        cat = "memcpy";
        break;
    case TRC_EV_GPU_MEMSET:
        name = nvvp_memset_name();
        cat = "memset";
        break;
    case TRC_EV_GPU_SYNC:
        name = sync_name(s->u.y.sync_kind);
        cat = "sync";
        break;
    case TRC_EV_API_CALL:
        name = s->u.a.name && s->u.a.name[0] ? s->u.a.name : "<unknown API>";
        cat = api_cat(s->u.a.domain);
        break;
    default: /* TRC_EV_MARKER */
        name = s->u.mk.name && s->u.mk.name[0] ? s->u.mk.name : "<unnamed range>";
        cat = s->u.mk.domain && s->u.mk.domain[0] ? s->u.mk.domain : "marker";
        break;
    }
    chr_next_event(c);
    jsonw_raw(w, "{\"ph\":\"X\",\"name\":");
    if (write_name(c->gpu, w, name))
        return chr_fail(c, "names");
    jsonw_raw(w, ",\"cat\":");
    if (write_name(c->gpu, w, cat))
        return chr_fail(c, "names");
    write_i64_arg(w, ",\"pid\":", pid);
    write_i64_arg(w, ",\"tid\":", tid);
    jsonw_putc(w, ',');
    chr_write_ts(c, s->start);
    chr_write_dur(c, base_ns, s->start, s->end);
    if (bind) {
        write_i64_arg(w, ",\"bind_id\":", (int64_t)bind);
        jsonw_raw(w, role == ROLE_OUT ? ",\"flow_out\":true" : ",\"flow_in\":true");
    }
    jsonw_raw(w, ",\"args\":{");
    switch (s->type) {
    case TRC_EV_GPU_KERNEL:
        write_where(w, &s->u.k.where);
        write_dim3(w, ",\"grid\":", s->u.k.grid);
        write_dim3(w, ",\"block\":", s->u.k.block);
        write_i64_arg(w, ",\"registers\":", s->u.k.registers);
        write_i64_arg(w, ",\"static_smem\":", s->u.k.static_smem);
        write_i64_arg(w, ",\"dynamic_smem\":", s->u.k.dynamic_smem);
        break;
    case TRC_EV_GPU_MEMCPY:
        write_where(w, &s->u.m.where);
        jsonw_raw(w, ",\"bytes\":");
        jsonw_u64(w, s->u.m.bytes);
        jsonw_raw(w, ",\"copy_kind\":");
        jsonw_str(w, nvvp_copy_short(s->u.m.copy_kind));
        jsonw_raw(w, ",\"src_kind\":");
        jsonw_str(w, nvvp_mem_name(s->u.m.src_kind));
        jsonw_raw(w, ",\"dst_kind\":");
        jsonw_str(w, nvvp_mem_name(s->u.m.dst_kind));
        if (s->u.m.copy_kind == TRC_COPY_PTOP)
            write_i64_arg(w, ",\"dst_device\":", s->u.m.dst_device);
        break;
    case TRC_EV_GPU_MEMSET:
        write_where(w, &s->u.s.where);
        jsonw_raw(w, ",\"bytes\":");
        jsonw_u64(w, s->u.s.bytes);
        write_i64_arg(w, ",\"value\":", s->u.s.value);
        jsonw_raw(w, ",\"mem_kind\":");
        jsonw_str(w, nvvp_mem_name(s->u.s.mem_kind));
        break;
    case TRC_EV_GPU_SYNC:
        write_where(w, &s->u.y.where);
        jsonw_raw(w, ",\"sync_kind\":");
        jsonw_str(w, nvvp_sync_name(s->u.y.sync_kind));
        break;
    case TRC_EV_API_CALL:
        write_i64_arg(w, "\"correlation\":", s->u.a.correlation);
        if (s->u.a.result)
            write_i64_arg(w, ",\"result\":", s->u.a.result);
        if (s->u.a.stack && write_call_site(c->gpu, w, r, s->u.a.stack))
            return chr_fail(c, "call sites");
        break;
    default:
        write_marker_args(w, &s->u.mk);
        break;
    }
    jsonw_raw(w, "}}");
    return TRC_OK;
}

/* Drop the waiters that are done once they are most of the array. */
static int compact_waiters(chr_gpu *g)
{
    uint32_t n = 0, cap = 64;

    if (g->n_done < 1024 || g->n_done * 2 < g->n_wait)
        return 0;
    for (uint32_t i = 0; i < g->n_wait; i++)
        if (!g->wait[i].done)
            g->wait[n++] = g->wait[i];
    g->n_wait = n;
    g->n_done = 0;
    g->oldest = 0;
    while (cap < 2 * (n + 1))
        cap *= 2;
    return wrebuild(g, cap);
}

/* A slice leaves its track's window: place it and write it (or let it
 * wait for its flow partner). */
static trc_status release(chrome *c, const trc_reader *r, uint32_t ti, const gslice *s)
{
    chr_gpu *g = c->gpu;
    gtrack *t = &g->tracks[ti];
    int in_launch = 0;
    int64_t li = place(g, t, s, &in_launch), owner = t->owner;
    uint32_t corr = 0, found;
    uint64_t key;
    int role;
    const lane *l;
    waiter *w;

    if (li < 0)
        return chr_fail(c, "lanes");
    l = &t->lanes[li];
    role = flow_role(s, &corr, &owner);
    if (role == ROLE_OUT && in_launch)
        role = ROLE_NONE; /* the driver call inside a runtime launch: the outer one links */
    if (role == ROLE_NONE)
        return write_gslice(c, r, t->pid, l->tid, l->base_ns, s, 0, 0);
    key = wkey(owner, corr);
    found = wget(g, key);
    if (found) {
        uint32_t wcorr;
        int64_t wowner;
        int wrole;
        const gslice *out, *in;
        uint64_t bind;

        w = &g->wait[found - 1];
        wrole = flow_role(&w->s, &wcorr, &wowner);
        if (wrole == role) /* a second one with this id: write it unlinked */
            return write_gslice(c, r, t->pid, l->tid, l->base_ns, s, 0, 0);
        out = role == ROLE_OUT ? s : &w->s;
        in = role == ROLE_OUT ? &w->s : s;
        bind = out->start < in->start ? ++g->n_flows : 0;
        if (write_gslice(c, r, g->tracks[w->track].pid, w->tid, w->base_ns, &w->s, bind, wrole) ||
            write_gslice(c, r, t->pid, l->tid, l->base_ns, s, bind, role))
            return TRC_ERR_NOMEM;
        w->done = 1;
        g->n_done++;
        wdel(g, key);
        return compact_waiters(g) ? chr_fail(c, "flow table") : TRC_OK;
    }
    if (cpuview_grow(&g->wait, &g->cap_wait, g->n_wait + 1, sizeof *g->wait, 16))
        return chr_fail(c, "flow table");
    if ((uint64_t)(g->wn + 1) * 2 > g->wcap && wrebuild(g, g->wcap ? g->wcap * 2 : 64))
        return chr_fail(c, "flow table");
    w = &g->wait[g->n_wait];
    w->s = *s;
    w->track = ti;
    w->tid = l->tid;
    w->base_ns = l->base_ns;
    w->done = 0;
    wput_raw(g, key, ++g->n_wait);
    if (g->n_wait - g->n_done > WAIT_MAX) { /* the oldest gives up: unlinked */
        while (g->wait[g->oldest].done)
            g->oldest++;
        w = &g->wait[g->oldest];
        if (write_gslice(c, r, g->tracks[w->track].pid, w->tid, w->base_ns, &w->s, 0, 0))
            return TRC_ERR_NOMEM;
        w->done = 1;
        g->n_done++;
        wrole_key(g, w, &key);
        wdel(g, key);
        return compact_waiters(g) ? chr_fail(c, "flow table") : TRC_OK;
    }
    return TRC_OK;
}

/* Queue s on track ti; the window's first slice leaves when it is full. */
static trc_status add_slice(chrome *c, const trc_reader *r, int64_t ti, gslice *s)
{
    chr_gpu *g = c->gpu;
    uint32_t slot;
    gtrack *t;

    if (ti < 0)
        return TRC_ERR_NOMEM;
    if (s->end <= s->start)
        return TRC_OK; /* zero-length: no time to show */
    t = &g->tracks[ti];
    s->seq = g->seq++;
    if (!t->n_free) {
        if (cpuview_grow(&t->pool, &t->cap_pool, t->n_pool + 1, sizeof *t->pool, 16) ||
            cpuview_grow(&t->free_slots, &t->cap_free, t->n_pool + 1, sizeof *t->free_slots, 16))
            return chr_fail(c, "reorder window");
        t->free_slots[t->n_free++] = t->n_pool++;
    }
    if (cpuview_grow(&t->heap, &t->cap_heap, t->n_heap + 1, sizeof *t->heap, 16))
        return chr_fail(c, "reorder window");
    slot = t->free_slots[--t->n_free];
    t->pool[slot] = *s;
    t->heap[t->n_heap].start = s->start;
    t->heap[t->n_heap].end = s->end;
    t->heap[t->n_heap].seq = s->seq;
    t->heap[t->n_heap].slot = slot;
    heap_up(t->heap, t->n_heap++);
    if (t->n_heap > WINDOW) {
        gslice first;
        heap_pop(t, &first);
        return release(c, r, (uint32_t)ti, &first);
    }
    return TRC_OK;
}

/* ---- events ------------------------------------------------------------ */

static int64_t activity_track(chrome *c, uint32_t kind, const trc_gpu_where *w)
{
    return get_track(c, kind, w->pid, w->device, w->context, w->stream, 0);
}

/* pid of reader thread id (0 when unknown). */
static int64_t thread_pid(const trc_reader *r, uint32_t thread)
{
    const trc_thread *th = trc_reader_thread(r, thread);
    return th ? th->pid : 0;
}

/* {"ph":"i"} of marker m on track ti's first lane; note says why. */
static trc_status write_instant(chrome *c, int64_t ti, const trc_marker *m, int64_t at,
                                const char *note)
{
    chr_gpu *g = c->gpu;
    gtrack *t;
    jsonw *w = &c->w;

    if (ti < 0)
        return TRC_ERR_NOMEM;
    t = &g->tracks[ti];
    if (!t->n_lanes && new_lane(g, t, INT64_MIN) < 0)
        return chr_fail(c, "lanes");
    chr_next_event(c);
    jsonw_raw(w, "{\"ph\":\"i\",\"name\":");
    jsonw_str(w, m->name && m->name[0] ? m->name : "<unnamed marker>");
    jsonw_raw(w, ",\"cat\":");
    jsonw_str(w, m->domain && m->domain[0] ? m->domain : "marker");
    jsonw_raw(w, ",\"s\":\"t\"");
    write_i64_arg(w, ",\"pid\":", t->pid);
    write_i64_arg(w, ",\"tid\":", t->lanes[0].tid);
    jsonw_putc(w, ',');
    chr_write_ts(c, at);
    jsonw_raw(w, ",\"args\":{");
    write_marker_args(w, m);
    if (note) {
        jsonw_raw(w, ",\"note\":");
        jsonw_str(w, note);
    }
    jsonw_raw(w, "}}");
    return TRC_OK;
}

static trc_status on_marker(chrome *c, const trc_reader *r, const trc_marker *m)
{
    int64_t owner = m->thread ? thread_pid(r, m->thread) : m->pid;
    int64_t ti = get_track(c, TK_MARKS, owner, 0, 0, 0, m->thread);
    gtrack *t;
    gslice s;

    if (ti < 0)
        return TRC_ERR_NOMEM;
    t = &c->gpu->tracks[ti];
    memset(&s, 0, sizeof s);
    s.type = TRC_EV_MARKER;
    s.u.mk = *m;
    switch (m->kind) {
    case TRC_MARK_INSTANT:
        return write_instant(c, ti, m, m->start_ns, NULL);
    case TRC_MARK_PUSH:
        if (cpuview_grow(&t->push, &t->cap_push, t->n_push + 1, sizeof *t->push, 16))
            return chr_fail(c, "marker stack");
        t->push[t->n_push++].m = *m;
        return TRC_OK;
    case TRC_MARK_POP:
        if (!t->n_push)
            return write_instant(c, ti, m, m->start_ns, "end of a range whose start was not recorded");
        s.u.mk = t->push[--t->n_push].m;
        s.u.mk.kind = TRC_MARK_RANGE;
        s.start = s.u.mk.start_ns;
        s.end = m->end_ns > m->start_ns ? m->end_ns : m->start_ns;
        return add_slice(c, r, ti, &s);
    default:
        s.start = m->start_ns;
        s.end = m->end_ns;
        return add_slice(c, r, ti, &s);
    }
}

trc_status chr_gpu_event(chrome *c, const trc_reader *r, const trc_event *ev)
{
    gslice s;

    memset(&s, 0, sizeof s);
    s.type = ev->type;
    switch (ev->type) {
    case TRC_EV_GPU_KERNEL:
        s.u.k = ev->u.kernel;
        s.start = s.u.k.start_ns;
        s.end = s.u.k.end_ns;
        return add_slice(c, r, activity_track(c, TK_STREAM, &s.u.k.where), &s);
    case TRC_EV_GPU_MEMCPY:
        s.u.m = ev->u.memcpy;
        s.start = s.u.m.start_ns;
        s.end = s.u.m.end_ns;
        return add_slice(c, r, activity_track(c, TK_STREAM, &s.u.m.where), &s);
    case TRC_EV_GPU_MEMSET:
        s.u.s = ev->u.memset;
        s.start = s.u.s.start_ns;
        s.end = s.u.s.end_ns;
        return add_slice(c, r, activity_track(c, TK_STREAM, &s.u.s.where), &s);
    case TRC_EV_GPU_SYNC:
        s.u.y = ev->u.sync;
        s.start = s.u.y.start_ns;
        s.end = s.u.y.end_ns;
        return add_slice(c, r, activity_track(c, TK_SYNC, &s.u.y.where), &s);
    case TRC_EV_API_CALL:
        s.u.a = ev->u.api;
        s.start = s.u.a.start_ns;
        s.end = s.u.a.end_ns;
        return add_slice(c, r,
                         get_track(c, TK_API, thread_pid(r, s.u.a.thread), 0, 0, 0, s.u.a.thread),
                         &s);
    case TRC_EV_MARKER:
        return on_marker(c, r, &ev->u.marker);
    default:
        return TRC_OK;
    }
}

trc_status chr_gpu_flush(chrome *c, const trc_reader *r)
{
    chr_gpu *g = c->gpu;
    trc_status st;

    for (uint32_t i = 0; i < g->n_tracks; i++) {
        while (g->tracks[i].n_heap) {
            gslice s;
            heap_pop(&g->tracks[i], &s);
            if ((st = release(c, r, i, &s)) != TRC_OK)
                return st;
        }
    }
    for (uint32_t i = 0; i < g->n_wait; i++) { /* partners that never came */
        const waiter *w = &g->wait[i];
        if (!w->done &&
            (st = write_gslice(c, r, g->tracks[w->track].pid, w->tid, w->base_ns, &w->s, 0, 0)) !=
                TRC_OK)
            return st;
    }
    g->n_wait = g->n_done = g->oldest = 0;
    for (uint32_t i = 0; i < g->n_tracks; i++) {
        gtrack *t = &g->tracks[i];
        while (t->n_push) {
            const trc_marker *m = &t->push[--t->n_push].m;
            if ((st = write_instant(c, i, m, m->start_ns, "start of a range that did not end")) !=
                TRC_OK)
                return st;
        }
    }
    return TRC_OK;
}

/* ---- names ------------------------------------------------------------- */

/* 1 if another stream track of t's device shows the same stream number
 * for another process or context. */
static int stream_shared(const chr_gpu *g, const gtrack *t)
{
    for (uint32_t i = 0; i < g->n_tracks; i++) {
        const gtrack *o = &g->tracks[i];
        if ((o->kind == TK_STREAM || o->kind == TK_SYNC) && o->device == t->device &&
            o->stream == t->stream && (o->owner != t->owner || o->context != t->context))
            return 1;
    }
    return 0;
}

static void write_track_name(chrome *c, const trc_reader *r, const gtrack *t, uint32_t lane_no)
{
    jsonw *w = &c->w;
    const trc_thread *th;

    jsonw_raw(w, "\"name\":\"");
    switch (t->kind) {
    case TK_STREAM:
    case TK_SYNC:
        if (t->stream == NO_STREAM) {
            jsonw_raw(w, "context ");
            jsonw_u64(w, t->context);
        } else {
            jsonw_raw(w, "stream ");
            jsonw_u64(w, t->stream);
        }
        if (t->kind == TK_SYNC)
            jsonw_raw(w, " sync");
        if (t->stream != NO_STREAM && stream_shared(c->gpu, t)) {
            jsonw_raw(w, " (pid ");
            jsonw_i64(w, t->owner);
            jsonw_raw(w, ", context ");
            jsonw_u64(w, t->context);
            jsonw_putc(w, ')');
        }
        break;
    default:
        jsonw_raw(w, t->kind == TK_API ? "CUDA API" : "markers");
        th = t->thread ? trc_reader_thread(r, t->thread) : NULL;
        if (th && th->name && th->name[0]) {
            jsonw_raw(w, ": ");
            jsonw_str_body(w, th->name, strlen(th->name));
        }
        if (th) {
            jsonw_raw(w, " (tid ");
            jsonw_i64(w, th->tid);
            jsonw_putc(w, ')');
        } else if (!t->thread) {
            jsonw_raw(w, " (process)");
        }
        break;
    }
    if (lane_no) {
        jsonw_raw(w, " (");
        jsonw_u64(w, lane_no + 1);
        jsonw_putc(w, ')');
    }
    jsonw_raw(w, "\"}}");
}

static void write_lane_meta(chrome *c, const trc_reader *r, const gtrack *t, uint64_t *sort)
{
    for (uint32_t l = 0; l < t->n_lanes; l++) {
        chr_write_meta(c, "thread_name", t->pid, t->lanes[l].tid);
        write_track_name(c, r, t, l);
        chr_write_meta(c, "thread_sort_index", t->pid, t->lanes[l].tid);
        jsonw_raw(&c->w, "\"sort_index\":");
        jsonw_u64(&c->w, (*sort)++);
        jsonw_raw(&c->w, "}}");
    }
}

/* Order of GPU tracks in their process: by stream (the no-stream
 * context track last), process, context, then the stream before its
 * sync track. */
static int gpu_track_before(const gtrack *a, const gtrack *b)
{
    if (a->stream != b->stream)
        return a->stream < b->stream;
    if (a->owner != b->owner)
        return a->owner < b->owner;
    if (a->context != b->context)
        return a->context < b->context;
    return a->kind < b->kind;
}

trc_status chr_gpu_write_meta(chrome *c, const trc_reader *r)
{
    chr_gpu *g = c->gpu;
    uint64_t sort = c->n_threads;
    uint32_t *order = trc_calloc(g->n_tracks ? g->n_tracks : 1, sizeof *order);

    if (!order)
        return chr_fail(c, "track order");

    /* Extra tracks of CPU processes: after the sampled threads. */
    for (uint32_t i = 0; i < g->n_tracks; i++)
        if (g->tracks[i].kind == TK_API || g->tracks[i].kind == TK_MARKS)
            write_lane_meta(c, r, &g->tracks[i], &sort);
    /* GPU pseudo-processes, by device, after the CPU processes. */
    for (uint32_t i = 1; i < g->n_devices; i++)
        for (uint32_t j = i; j > 0 && g->devices[j] < g->devices[j - 1]; j--) {
            uint32_t x = g->devices[j];
            g->devices[j] = g->devices[j - 1];
            g->devices[j - 1] = x;
        }
    for (uint32_t d = 0; d < g->n_devices; d++) {
        uint32_t dev = g->devices[d], n = 0;
        int64_t pid = CHR_GPU_PID + (int64_t)(dev & 0xffff);
        const trc_gpu_device *gd = trc_reader_gpu_device(r, dev);

        chr_write_meta(c, "process_name", pid, 0);
        jsonw_raw(&c->w, "\"name\":\"GPU ");
        jsonw_u64(&c->w, dev);
        if (gd && gd->name && gd->name[0]) {
            jsonw_raw(&c->w, ": ");
            jsonw_str_body(&c->w, gd->name, strlen(gd->name));
        }
        jsonw_raw(&c->w, "\"}}");
        chr_write_meta(c, "process_sort_index", pid, 0);
        jsonw_raw(&c->w, "\"sort_index\":");
        jsonw_u64(&c->w, (uint64_t)c->n_pids + d);
        jsonw_raw(&c->w, "}}");
        for (uint32_t i = 0; i < g->n_tracks; i++) {
            const gtrack *t = &g->tracks[i];
            uint32_t j = n++;
            if (t->kind > TK_SYNC || t->device != dev) {
                n--;
                continue;
            }
            for (; j > 0 && gpu_track_before(t, &g->tracks[order[j - 1]]); j--)
                order[j] = order[j - 1];
            order[j] = i;
        }
        sort = 0;
        for (uint32_t i = 0; i < n; i++)
            write_lane_meta(c, r, &g->tracks[order[i]], &sort);
    }
    trc_free(order);
    return TRC_OK;
}
