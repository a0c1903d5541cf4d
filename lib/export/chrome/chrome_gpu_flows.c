/*
 * lib/export/chrome/chrome_gpu_flows.c — Chrome exporter, GPU half: the flows
 * from launch calls to their activities (the waiting table keyed by
 * process and correlation id) and releasing slices from the reorder
 * window to their lanes.  Design atop chrome_gpu.c ("Flows").
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lib/util/alloc.h"
#include "lib/util/grow.h"
#include "lib/export/chrome/chrome_gpu_int.h"
#include "lib/export/common/gpu_units.h"

/* ---- flows ------------------------------------------------------------- */

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

/* Index of the waiter (not done) with key, or TRCH_NONE. */
static uint32_t wget(const chr_gpu *g, uint64_t key)
{
    trch_probe p;
    for (uint32_t i = trch_first(&g->wait_index, trch_hash_u64(key), &p); i != TRCH_NONE;
         i = trch_next(&g->wait_index, &p))
        if (g->wait[i].key == key)
            return i;
    return TRCH_NONE;
}

/* Re-index the waiters not done (their indices have moved). */
static int wrebuild(chr_gpu *g)
{
    trch_clear(&g->wait_index);
    for (uint32_t i = 0; i < g->n_wait; i++)
        if (!g->wait[i].done && trch_add(&g->wait_index, trch_hash_u64(g->wait[i].key), i))
            return -1;
    return 0;
}

/* ---- waiters in the temporary file ------------------------------------
 * A slice whose partner never comes (its record was dropped) waits until
 * the end: their number grows with the trace.  Beyond wait_mem waiting in
 * memory, the oldest moves to the temporary file, leaving its key and
 * offset; it comes back when its partner arrives, when it gives up
 * (WAIT_MAX), or at the end.  Those in the file are all older than
 * those in memory, so taking them first keeps the order of placing. */

/* A failure of the temporary file, in c->err; returns TRC_ERR_IO. */
static trc_status chr_fail_io(chrome *c, const char *what)
{
    snprintf(c->err, sizeof c->err, "chrome: %s: %s", what, strerror(errno));
    c->err_st = TRC_ERR_IO;
    return TRC_ERR_IO;
}

/* Index of the spilled waiter (not done) with key, or TRCH_NONE. */
static uint32_t spget(const chr_gpu *g, uint64_t key)
{
    trch_probe p;
    for (uint32_t i = trch_first(&g->sp_index, trch_hash_u64(key), &p); i != TRCH_NONE;
         i = trch_next(&g->sp_index, &p))
        if (g->sp[i].key == key)
            return i;
    return TRCH_NONE;
}

/* Read spilled waiter i back into *w.  0, or -1 on a read error. */
static int chg_spilled_read(chr_gpu *g, uint32_t i, waiter *w)
{
    return trcu_spill_read(&g->sp_file, g->sp[i].off, w, 1, sizeof *w) ? -1 : 0;
}

/* Spilled waiter i is done: drop the done ones once they are most. */
static int sp_done(chr_gpu *g, uint32_t i)
{
    uint32_t n = 0;

    g->sp[i].done = 1;
    g->sp_done++;
    trch_remove(&g->sp_index, trch_hash_u64(g->sp[i].key), i);
    if (g->sp_done < 1024 || g->sp_done * 2 < g->n_sp)
        return 0;
    for (uint32_t k = 0; k < g->n_sp; k++)
        if (!g->sp[k].done)
            g->sp[n++] = g->sp[k];
    g->n_sp = n;
    g->sp_done = 0;
    g->sp_oldest = 0;
    trch_clear(&g->sp_index);
    for (uint32_t k = 0; k < g->n_sp; k++)
        if (trch_add(&g->sp_index, trch_hash_u64(g->sp[k].key), k))
            return -1;
    return 0;
}

/* Drop the waiters that are done once they are most of the array. */
static int compact_waiters(chr_gpu *g)
{
    uint32_t n = 0;

    if (g->n_done < 1024 || g->n_done * 2 < g->n_wait)
        return 0;
    for (uint32_t i = 0; i < g->n_wait; i++)
        if (!g->wait[i].done)
            g->wait[n++] = g->wait[i];
    g->n_wait = n;
    g->n_done = 0;
    g->oldest = 0;
    return wrebuild(g);
}

/* A slice leaves its track's window: place it and write it (or let it
 * wait for its flow partner). */
trc_status chg_release(chrome *c, const trc_reader *r, uint32_t ti, const gslice *s)
{
    chr_gpu *g = c->gpu;
    gtrack *t = &g->tracks[ti];
    int in_launch = 0;
    int64_t li = chg_place(g, t, s, &in_launch), owner = t->owner;
    uint32_t corr = 0, found;
    uint64_t key;
    int role;
    waiter *w;

    if (li < 0)
        return chr_fail(c, "lanes");
    role = flow_role(s, &corr, &owner);
    if (role == ROLE_OUT && in_launch)
        role = ROLE_NONE; /* the driver call inside a runtime launch: the outer one links */
    if (role == ROLE_NONE)
        return chg_write_gslice(c, r, ti, (uint32_t)li, s, 0, 0);
    key = wkey(owner, corr);
    found = wget(g, key);
    uint32_t spilled = found == TRCH_NONE ? spget(g, key) : TRCH_NONE;
    waiter back;
    if (spilled != TRCH_NONE && chg_spilled_read(g, spilled, &back))
        return chr_fail_io(c, "reading the temporary file");
    if (found != TRCH_NONE || spilled != TRCH_NONE) {
        uint32_t wcorr;
        int64_t wowner;
        int wrole;
        const gslice *out, *in;
        uint64_t bind;

        w = found != TRCH_NONE ? &g->wait[found] : &back;
        wrole = flow_role(&w->s, &wcorr, &wowner);
        if (wrole == role) /* a second one with this id: write it unlinked */
            return chg_write_gslice(c, r, ti, (uint32_t)li, s, 0, 0);
        out = role == ROLE_OUT ? s : &w->s;
        in = role == ROLE_OUT ? &w->s : s;
        bind = out->start < in->start ? ++g->n_flows : 0;
        if (chg_write_gslice(c, r, w->track, w->lane, &w->s, bind, wrole) ||
            chg_write_gslice(c, r, ti, (uint32_t)li, s, bind, role))
            return TRC_ERR_NOMEM;
        if (spilled != TRCH_NONE)
            return sp_done(g, spilled) ? chr_fail(c, "flow table") : TRC_OK;
        w->done = 1;
        g->n_done++;
        trch_remove(&g->wait_index, trch_hash_u64(key), found);
        return compact_waiters(g) ? chr_fail(c, "flow table") : TRC_OK;
    }
    if (trcu_grow32(&g->wait, &g->cap_wait, g->n_wait, sizeof *g->wait))
        return chr_fail(c, "flow table");
    if (g->n_wait == UINT32_MAX - 1 ||
        trch_reserve(&g->wait_index, g->n_wait - g->n_done + 1) != TRC_OK)
        return chr_fail(c, "flow table");
    w = &g->wait[g->n_wait];
    w->s = *s;
    w->track = ti;
    w->lane = (uint32_t)li;
    w->key = key;
    w->done = 0;
    (void)trch_add(&g->wait_index, trch_hash_u64(key), g->n_wait); /* reserved above */
    g->n_wait++;
    if (g->n_wait - g->n_done + g->n_sp - g->sp_done > WAIT_MAX) {
        /* the oldest gives up: unlinked */
        if (g->n_sp > g->sp_done) {
            while (g->sp[g->sp_oldest].done)
                g->sp_oldest++;
            if (chg_spilled_read(g, g->sp_oldest, &back))
                return chr_fail_io(c, "reading the temporary file");
            if (chg_write_gslice(c, r, back.track, back.lane, &back.s, 0, 0))
                return TRC_ERR_NOMEM;
            return sp_done(g, g->sp_oldest) ? chr_fail(c, "flow table") : TRC_OK;
        }
        while (g->wait[g->oldest].done)
            g->oldest++;
        w = &g->wait[g->oldest];
        if (chg_write_gslice(c, r, w->track, w->lane, &w->s, 0, 0))
            return TRC_ERR_NOMEM;
        w->done = 1;
        g->n_done++;
        trch_remove(&g->wait_index, trch_hash_u64(w->key), g->oldest);
        return compact_waiters(g) ? chr_fail(c, "flow table") : TRC_OK;
    }
    if (g->n_wait - g->n_done > g->wait_mem) { /* the oldest in memory moves to the file */
        while (g->wait[g->oldest].done)
            g->oldest++;
        w = &g->wait[g->oldest];
        if (trcu_grow32(&g->sp, &g->cap_sp, g->n_sp, sizeof *g->sp) ||
            trch_reserve(&g->sp_index, g->n_sp - g->sp_done + 1) != TRC_OK)
            return chr_fail(c, "flow table");
        int64_t off;
        if (trcu_spill_append(&g->sp_file, w, 1, sizeof *w, &off))
            return chr_fail_io(c, trcu_spill_used(&g->sp_file) ? "writing the temporary file"
                                                                : "cannot create a temporary file");
        g->sp[g->n_sp] = (wspilled){w->key, off, 0};
        (void)trch_add(&g->sp_index, trch_hash_u64(w->key), g->n_sp); /* reserved above */
        g->n_sp++;
        w->done = 1;
        g->n_done++;
        trch_remove(&g->wait_index, trch_hash_u64(w->key), g->oldest);
        return compact_waiters(g) ? chr_fail(c, "flow table") : TRC_OK;
    }
    return TRC_OK;
}

/* Write the slices whose partners never came, unlinked, in order of
 * placing (those in the file first: they are the older), and forget
 * every waiter. */
trc_status chg_flush_waiters(chrome *c, const trc_reader *r)
{
    chr_gpu *g = c->gpu;
    trc_status st;
    waiter back;

    for (uint32_t i = 0; i < g->n_sp; i++) {
        if (g->sp[i].done)
            continue;
        if (chg_spilled_read(g, i, &back))
            return chr_fail_io(c, "reading the temporary file");
        if ((st = chg_write_gslice(c, r, back.track, back.lane, &back.s, 0, 0)) != TRC_OK)
            return st;
    }
    for (uint32_t i = 0; i < g->n_wait; i++) {
        const waiter *w = &g->wait[i];
        if (!w->done &&
            (st = chg_write_gslice(c, r, w->track, w->lane, &w->s, 0, 0)) != TRC_OK)
            return st;
    }
    g->n_wait = g->n_done = g->oldest = 0;
    trch_clear(&g->wait_index);
    g->n_sp = g->sp_done = g->sp_oldest = 0;
    trch_clear(&g->sp_index);
    return TRC_OK;
}

/* Queue s on track ti; the window's first slice leaves when it is full. */
trc_status chg_add_slice(chrome *c, const trc_reader *r, int64_t ti, gslice *s)
{
    chr_gpu *g = c->gpu;
    struct hent e;
    gtrack *t;

    if (ti < 0)
        return c->err_st; /* chg_get_track said why */
    if (s->end <= s->start)
        return TRC_OK; /* zero-length: no time to show */
    t = &g->tracks[ti];
    s->seq = g->seq++;
    if (!t->n_free) {
        if (trcu_grow32(&t->pool, &t->cap_pool, t->n_pool, sizeof *t->pool) ||
            trcu_grow32(&t->free_slots, &t->cap_free, t->n_pool, sizeof *t->free_slots))
            return chr_fail(c, "reorder window");
        t->free_slots[t->n_free++] = t->n_pool++;
    }
    if (!t->win && !(t->win = trc_malloc(WINDOW_CAP * sizeof *t->win)))
        return chr_fail(c, "reorder window");
    e.slot = t->free_slots[--t->n_free];
    e.start = s->start;
    e.end = s->end;
    e.seq = s->seq;
    t->pool[e.slot] = *s;
    chg_window_add(t, &e);
    if (t->n_win > WINDOW)
        return chg_release_first(c, r, (uint32_t)ti);
    return TRC_OK;
}

/* Release the first slice of track ti's window and free its slot. */
trc_status chg_release_first(chrome *c, const trc_reader *r, uint32_t ti)
{
    gtrack *t = &c->gpu->tracks[ti];
    uint32_t slot = chg_window_pop(t);
    /* Released in place: releasing adds no slice, so the pool stays put. */
    trc_status st = chg_release(c, r, ti, &t->pool[slot]);

    t->free_slots[t->n_free++] = slot; /* room: it never holds more than the pool */
    return st;
}
