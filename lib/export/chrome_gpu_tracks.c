/*
 * lib/export/chrome_gpu_tracks.c — Chrome exporter, GPU half: the state's
 * life, tracks (one per stream, sync, API and marker owner), their lanes
 * (extra tids so that slices nest) and the per-track reorder window.
 * Design atop chrome_gpu.c; shared state in chrome_gpu_int.h.
 */
#include <string.h>

#include "format/alloc.h"
#include "lib/export/chrome_gpu_int.h"
#include "lib/export/nvvp_units.h"

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
    trch_index_cleanup(&g->track_index);
    trc_free(g->devices);
    trc_free(g->wait);
    trch_index_cleanup(&g->wait_index);
    for (uint32_t i = 0; i < g->n_names; i++)
        trc_free(g->names[i].text);
    trc_free(g->names);
    trch_index_cleanup(&g->name_index);
    for (uint32_t i = 0; i < g->cap_site; i++)
        trc_free(g->site[i]);
    trc_free(g->site);
    trc_free(g);
}

/* ---- tracks ------------------------------------------------------------ */

static uint64_t track_hash(uint32_t kind, int64_t owner, uint32_t device, uint32_t context,
                           uint32_t stream, uint32_t thread)
{
    uint64_t h = trch_hash_more_u64(trch_hash_u64((uint64_t)owner), kind);
    h = trch_hash_more_u64(h, ((uint64_t)device << 32) | context);
    return trch_hash_more_u64(h, ((uint64_t)stream << 32) | thread);
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
int64_t chg_get_track(chrome *c, uint32_t kind, int64_t owner, uint32_t device,
                      uint32_t context, uint32_t stream, uint32_t thread)
{
    chr_gpu *g = c->gpu;
    uint64_t h = track_hash(kind, owner, device, context, stream, thread);
    trch_probe p;
    gtrack *t;

    for (uint32_t i = trch_first(&g->track_index, h, &p); i != TRCH_NONE;
         i = trch_next(&g->track_index, &p)) {
        t = &g->tracks[i];
        if (t->kind == kind && t->owner == owner && t->device == device &&
            t->context == context && t->stream == stream && t->thread == thread)
            return i;
    }
    if (trch_reserve(&g->track_index, g->n_tracks + 1) != TRC_OK)
        return track_fail(c, "track table");
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
    (void)trch_add(&g->track_index, h, g->n_tracks); /* cannot fail after the reserve */
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
int64_t chg_new_lane(chr_gpu *g, gtrack *t, int64_t start)
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
int64_t chg_place(chr_gpu *g, gtrack *t, const gslice *s, int *in_launch)
{
    int64_t li = -1;
    lane *l;

    for (uint32_t i = 0; i < t->n_lanes && li < 0; i++)
        if (lane_fits(&t->lanes[i], s->start, s->end))
            li = i;
    if (li < 0)
        li = t->n_lanes < MAX_LANES ? chg_new_lane(g, t, s->start) : (int64_t)t->n_lanes - 1;
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

void chg_heap_up(struct hent *h, uint32_t i)
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
void chg_heap_pop(gtrack *t, gslice *out)
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

