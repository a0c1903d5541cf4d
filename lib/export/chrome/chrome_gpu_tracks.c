/*
 * lib/export/chrome/chrome_gpu_tracks.c — Chrome exporter, GPU half: the state's
 * life, tracks (one per stream, sync, API and marker owner), their lanes
 * (extra tids so that slices nest) and the per-track reorder window.
 * Design atop chrome_gpu.c; shared state in chrome_gpu_int.h.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "lib/util/alloc.h"
#include "lib/util/grow.h"
#include "lib/export/chrome/chrome_gpu_int.h"
#include "lib/export/common/gpu_units.h"

chr_gpu *chr_gpu_new(uint32_t wait_mem)
{
    chr_gpu *g = trc_calloc(1, sizeof *g);
    if (g) {
        g->next_tid = CHR_SYNTH_TID;
        g->wait_mem = wait_mem ? wait_mem : WAIT_MEM;
    }
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
        trc_free(t->win);
        trc_free(t->pool);
        trc_free(t->free_slots);
        trc_free(t->push);
    }
    trc_free(g->tracks);
    exp_gpu_graph_free(g->graphs);
    trch_index_cleanup(&g->track_index);
    trc_free(g->devices);
    trc_free(g->wait);
    trch_index_cleanup(&g->wait_index);
    trc_free(g->sp);
    trch_index_cleanup(&g->sp_index);
    trcu_spill_close(&g->sp_file);
    for (uint32_t i = 0; i < g->n_heads; i++)
        trc_free(g->heads[i].text);
    trc_free(g->heads);
    trch_index_cleanup(&g->head_index);
    for (uint32_t i = 0; i < g->cap_site; i++)
        trc_free(g->site[i].text);
    trc_free(g->site);
    chg_sync_free(g);
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

    if (device > CHR_GPU_DEVICE_MAX) {
        snprintf(c->err, sizeof c->err,
                 "chrome: GPU device %" PRIu32 ": over %u, past the process ids a Chrome "
                 "trace gives GPUs", device, CHR_GPU_DEVICE_MAX);
        c->err_st = TRC_ERR_LIMIT;
        return -1;
    }
    for (uint32_t i = 0; i < g->n_devices; i++)
        if (g->devices[i] == device)
            return CHR_GPU_PID + (int64_t)device;
    if (trcu_grow32(&g->devices, &g->cap_devices, g->n_devices, sizeof *g->devices)) {
        chr_fail(c, "device table");
        return -1;
    }
    g->devices[g->n_devices++] = device;
    return CHR_GPU_PID + (int64_t)device;
}

static int track_is(const gtrack *t, uint32_t kind, int64_t owner, uint32_t device,
                    uint32_t context, uint32_t stream, uint32_t thread)
{
    return t->kind == kind && t->owner == owner && t->device == device &&
           t->context == context && t->stream == stream && t->thread == thread;
}

static int64_t track_fail(chrome *c, const char *what)
{
    chr_fail(c, what);
    return -1;
}

/* Append key then v at dst; returns the end. */
static char *put_key_i64(char *dst, const char *key, int64_t v)
{
    size_t n = strlen(key);
    memcpy(dst, key, n);
    return jsonw_put_i64(dst + n, v);
}

/* t->where: what the args of every slice of the stream or sync track t
 * hold after the correlation (put_where of chrome_gpu_write.c), the same
 * for all of them: the track's key is their (process, device, context,
 * stream).  Fits: 4 keys of 11 bytes at most and 4 numbers of 20. */
static void build_where(gtrack *t)
{
    char *p = t->where;

    p = put_key_i64(p, ",\"process\":", t->owner);
    p = put_key_i64(p, ",\"device\":", t->device);
    p = put_key_i64(p, ",\"context\":", t->context);
    if (t->stream != NO_STREAM)
        p = put_key_i64(p, ",\"stream\":", t->stream);
    t->where_len = (uint32_t)(p - t->where);
}

int64_t chg_get_track(chrome *c, uint32_t kind, int64_t owner, uint32_t device,
                      uint32_t context, uint32_t stream, uint32_t thread)
{
    chr_gpu *g = c->gpu;
    uint32_t *last = &g->last_track[kind & 3];
    uint64_t h;
    trch_probe p;
    gtrack *t;

    if (*last < g->n_tracks && track_is(&g->tracks[*last], kind, owner, device, context, stream,
                                        thread))
        return *last;
    h = track_hash(kind, owner, device, context, stream, thread);
    for (uint32_t i = trch_first(&g->track_index, h, &p); i != TRCH_NONE;
         i = trch_next(&g->track_index, &p)) {
        if (track_is(&g->tracks[i], kind, owner, device, context, stream, thread))
            return *last = i;
    }
    if (trch_reserve(&g->track_index, g->n_tracks + 1) != TRC_OK)
        return track_fail(c, "track table");
    if (trcu_grow32(&g->tracks, &g->cap_tracks, g->n_tracks, sizeof *g->tracks))
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
        build_where(t);
    } else {
        t->pid = owner;
        if (chr_note_pid(c, owner))
            return track_fail(c, "process table");
    }
    (void)trch_add(&g->track_index, h, g->n_tracks); /* cannot fail after the reserve */
    *last = g->n_tracks;
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
    char *p;

    if (trcu_grow32(&t->lanes, &t->cap_lanes, t->n_lanes, sizeof *t->lanes))
        return -1;
    l = &t->lanes[t->n_lanes];
    memset(l, 0, sizeof *l);
    l->tid = tid;
    p = put_key_i64(l->ids, "\"pid\":", t->pid);
    p = put_key_i64(p, ",\"tid\":", tid);
    *p++ = ',';
    l->ids_len = (uint32_t)(p - l->ids);
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
    if (trcu_grow32(&l->open, &l->cap, l->depth, sizeof *l->open))
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

/* A ring of WINDOW_CAP entries kept sorted in release order.  Records
 * arrive nearly in start order, so a new entry usually goes last after
 * one comparison, or a step or two back (a runtime call written after
 * the driver call inside it); the first entry leaves in O(1).  At worst
 * (input crafted against it) an add moves WINDOW entries of 32 bytes. */

static int before(const struct hent *a, const struct hent *b)
{
    if (a->start != b->start)
        return a->start < b->start;
    if (a->end != b->end)
        return a->end > b->end; /* the longer first: it is the parent */
    return a->seq < b->seq;
}

void chg_window_add(gtrack *t, const struct hent *x)
{
    const uint32_t mask = WINDOW_CAP - 1;
    uint32_t i = t->n_win++;

    while (i > 0 && before(x, &t->win[(t->win_first + i - 1) & mask])) {
        t->win[(t->win_first + i) & mask] = t->win[(t->win_first + i - 1) & mask];
        i--;
    }
    t->win[(t->win_first + i) & mask] = *x;
}

uint32_t chg_window_pop(gtrack *t)
{
    uint32_t slot = t->win[t->win_first].slot;

    t->win_first = (t->win_first + 1) & (WINDOW_CAP - 1);
    t->n_win--;
    return slot;
}
