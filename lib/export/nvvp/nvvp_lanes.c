/*
 * lib/export/nvvp/nvvp_lanes.c — lane assignment and sub-pixel merging for the
 * SVG timeline (rules and contract in nvvp_lanes.h).
 */
#include "lib/export/nvvp/nvvp_lanes.h"

#include <string.h>

#include "lib/util/alloc.h"
#include "lib/util/grow.h"

#define MAX_LANES 64

typedef struct lane {
    int64_t busy_until;   /* end time of the last interval placed */
    double last_x1;       /* right edge of the last box emitted */
    int open;             /* a group is being collected */
    nvvp_box g;           /* the open group */
    double gx1;           /* unwidened right edge of the group */
} lane;

double nvvp_scale_x(const nvvp_scale *sc, int64_t t)
{
    /* in double: hostile times must not overflow a subtraction */
    double span = (double)sc->t1 - (double)sc->t0;
    if (span <= 0)
        span = 1;
    return sc->x0 + ((double)t - (double)sc->t0) * sc->width / span;
}

void nvvp_boxes_cleanup(nvvp_boxes *b)
{
    trc_free(b->v);
    memset(b, 0, sizeof *b);
}

uint32_t nvvp_box_main_key(const nvvp_box *b)
{
    uint32_t best = 0, bestc = 0;
    for (uint32_t i = 0; i < b->n_keys; i++) {
        if (b->key_counts[i] > bestc) {
            bestc = b->key_counts[i];
            best = b->keys[i];
        }
    }
    return best;
}

static void count_key(nvvp_box *b, uint32_t key)
{
    for (uint32_t i = 0; i < b->n_keys; i++) {
        if (b->keys[i] == key) {
            b->key_counts[i]++;
            return;
        }
    }
    if (b->n_keys < NVVP_TOP_KEYS) {
        b->keys[b->n_keys] = key;
        b->key_counts[b->n_keys++] = 1;
        return;
    }
    b->other_count++;
}

static int emit(nvvp_boxes *out, const nvvp_box *b)
{
    if (trcu_grow((void **)&out->v, &out->cap, out->n, sizeof *out->v) != TRC_OK)
        return -1;
    nvvp_box *d = &out->v[out->n++];
    *d = *b;
    if (d->x1 - d->x0 < 1.0)
        d->x1 = d->x0 + 1.0;
    return 0;
}

static void start_group(lane *ln, uint32_t li, const nvvp_span *s, int64_t a, int64_t b,
                        double x0, double x1)
{
    memset(&ln->g, 0, sizeof ln->g);
    ln->open = 1;
    ln->g.x0 = x0;
    ln->g.x1 = x1;
    ln->gx1 = x1;
    ln->g.start = a;
    ln->g.end = b;
    ln->g.busy_ns = ((uint64_t)b - (uint64_t)a);
    ln->g.lane = li;
    ln->g.count = 1;
    ln->g.ref = s->ref;
    count_key(&ln->g, s->key);
}

static int close_group(lane *ln, nvvp_boxes *out)
{
    if (!ln->open)
        return 0;
    ln->open = 0;
    double right = ln->g.x1 - ln->g.x0 < 1.0 ? ln->g.x0 + 1.0 : ln->g.x1;
    if (right > ln->last_x1)
        ln->last_x1 = right;
    return emit(out, &ln->g);
}

trc_status nvvp_layout(const nvvp_span *spans, size_t n, const nvvp_scale *sc,
                       uint32_t max_lanes, nvvp_boxes *out)
{
    lane lanes[MAX_LANES];
    uint32_t used = 1;
    if (max_lanes < 1)
        max_lanes = 1;
    if (max_lanes > MAX_LANES)
        max_lanes = MAX_LANES;
    out->n = 0;
    for (uint32_t i = 0; i < max_lanes; i++) {
        lanes[i].busy_until = INT64_MIN;
        lanes[i].last_x1 = -1e300;
        lanes[i].open = 0;
    }
    for (size_t i = 0; i < n; i++) {
        const nvvp_span *s = &spans[i];
        if (s->end < sc->t0 || s->start > sc->t1)
            continue;
        int64_t a = s->start < sc->t0 ? sc->t0 : s->start;
        int64_t b = s->end > sc->t1 ? sc->t1 : s->end;
        if (b < a)
            b = a;
        /* lane: first one free at this start, else the one freeing first */
        uint32_t li = 0, best = 0;
        for (li = 0; li < used; li++) {
            if (lanes[li].busy_until <= s->start)
                break;
            if (lanes[li].busy_until < lanes[best].busy_until)
                best = li;
        }
        if (li == used) {
            if (used < max_lanes)
                used++;
            else
                li = best;
        }
        lane *ln = &lanes[li];
        if (s->end > ln->busy_until)
            ln->busy_until = s->end;

        double x0 = nvvp_scale_x(sc, a), x1 = nvvp_scale_x(sc, b);
        int wide = x1 - x0 >= 1.0;
        if (ln->open) {
            if ((!wide && x0 < ln->gx1 + 1.0) || (wide && x0 < ln->gx1)) {
                if (x1 > ln->gx1)
                    ln->gx1 = ln->g.x1 = x1;
                if (b > ln->g.end)
                    ln->g.end = b;
                ln->g.busy_ns += ((uint64_t)b - (uint64_t)a);
                ln->g.count++;
                count_key(&ln->g, s->key);
                continue;
            }
            if (close_group(ln, out))
                return TRC_ERR_NOMEM;
        }
        if (wide && x0 >= ln->last_x1) {
            nvvp_box one;
            memset(&one, 0, sizeof one);
            one.x0 = x0;
            one.x1 = x1;
            one.start = a;
            one.end = b;
            one.busy_ns = ((uint64_t)b - (uint64_t)a);
            one.lane = li;
            one.count = 1;
            one.ref = s->ref;
            one.keys[0] = s->key;
            one.key_counts[0] = 1;
            one.n_keys = 1;
            if (emit(out, &one))
                return TRC_ERR_NOMEM;
            ln->last_x1 = x1;
            continue;
        }
        start_group(ln, li, s, a, b, x0, x1);
    }
    for (uint32_t i = 0; i < used; i++) {
        if (close_group(&lanes[i], out))
            return TRC_ERR_NOMEM;
    }
    out->lanes = used;
    return TRC_OK;
}
