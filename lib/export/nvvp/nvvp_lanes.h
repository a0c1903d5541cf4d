/*
 * lib/export/nvvp/nvvp_lanes.h — timeline geometry for the SVG view: place the
 * intervals of one row into sub-rows ("lanes", as NVVP splits its Compute
 * row when kernels run concurrently) and merge what is narrower than a
 * pixel, so the drawing stays bounded however long the trace is.
 *
 * Rules (per lane, intervals in start order, x in pixels):
 *  - an interval goes to the first lane free at its start; when all
 *    max_lanes are busy, to the lane that frees first (drawn overlapping);
 *  - an interval at least one pixel wide that starts after the lane's
 *    last box is its own box;
 *  - anything else joins the lane's open group when it starts within a
 *    pixel of the group's end (a wide interval only when it overlaps it),
 *    else opens a new group; a group of one is drawn as that interval.
 * Every box then covers at least a pixel that no other box of its lane
 * covers, or is followed by a gap of a pixel, so a lane holds at most
 * about 2 x width boxes.  Groups keep exact counts of up to NVVP_TOP_KEYS
 * distinct keys (e.g. kernel names) for their tooltips; the rest is
 * counted as "others".
 */
#ifndef TRC_LIB_EXPORT_NVVP_LANES_H
#define TRC_LIB_EXPORT_NVVP_LANES_H

#include <stddef.h>
#include <stdint.h>

#include "trc/trc.h"

#define NVVP_TOP_KEYS 3

/* An interval to place: [start, end] ns, ref = caller's index, key =
 * what groups count and colour by (a name id). */
typedef struct nvvp_span {
    int64_t start, end;
    uint32_t ref, key;
} nvvp_span;

/* Time window [t0, t1] drawn from x0 over width pixels. */
typedef struct nvvp_scale {
    int64_t t0, t1;
    double x0, width;
} nvvp_scale;

typedef struct nvvp_box {
    double x0, x1;            /* pixels, x1 - x0 >= 1 after widening */
    int64_t start, end;       /* time covered (clipped to the window) */
    uint64_t busy_ns;         /* sum of member durations inside the window */
    uint32_t lane;
    uint32_t count;           /* intervals in the box (1 = a single interval) */
    uint32_t ref;             /* ref of the first interval */
    uint32_t keys[NVVP_TOP_KEYS], key_counts[NVVP_TOP_KEYS];
    uint32_t n_keys;
    uint32_t other_count;     /* members whose key was not among keys */
} nvvp_box;

typedef struct nvvp_boxes {
    nvvp_box *v;
    size_t n, cap;
    uint32_t lanes;           /* lanes used by the last layout (>= 1) */
} nvvp_boxes;

/* x of time t (not clamped). */
double nvvp_scale_x(const nvvp_scale *sc, int64_t t);

/* Lay out n spans sorted by start (ties in any order) into at most
 * max_lanes lanes (>= 1), appending boxes to out after emptying it.
 * Spans entirely outside the window are skipped; others are clipped.
 * TRC_OK or TRC_ERR_NOMEM (out then holds a partial layout). */
trc_status nvvp_layout(const nvvp_span *spans, size_t n, const nvvp_scale *sc,
                       uint32_t max_lanes, nvvp_boxes *out);

/* The most frequent key of a box (its colour). */
uint32_t nvvp_box_main_key(const nvvp_box *b);

void nvvp_boxes_cleanup(nvvp_boxes *b);

#endif
