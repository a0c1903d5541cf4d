/*
 * lib/reader_int.h — the reader's state, shared by lib/reader.c (input,
 * chunks, sequence checks, loss events, public API) and
 * lib/reader_rec.c (records to events, segment-local to global ids).
 * Spec: spec/trc-format.md §4-§8 (summary: spec/DESIGN-NOTES.md).
 *
 * Segment-local ids are mapped through trcr_idmap arrays holding
 * global id + 1 (0 = not defined in this segment), reset at each
 * SEGMENT chunk.  Their size is bounded by the spec's id rules (an id is
 * at most the highest so far + 65536, and at most 2^24), never by the
 * number of events.
 */
#ifndef TRC_LIB_READER_INT_H
#define TRC_LIB_READER_INT_H

#include <stdint.h>

#include "trc/trc.h"
#include "format/record.h"
#include "format/records.h"
#include "format/scan.h"
#include "lib/model.h"

typedef struct trcr_idmap {
    uint32_t *g;              /* local id -> global id + 1 */
    size_t cap;
    uint32_t highest;         /* highest local id defined */
} trcr_idmap;

/* Global id for a local one; returns 0 and sets *ok = 0 if undefined. */
static inline uint32_t trcr_map(const trcr_idmap *m, uint64_t local, int *ok)
{
    uint32_t g = local < m->cap ? m->g[local] : 0;
    if (!g) {
        *ok = 0;
        return 0;
    }
    return g - 1;
}

#define TRCR_MAX_PENDING 4    /* a chunk start or must-understand loss + finish_chunk's 3 */
#define TRCR_DETAIL 200

struct trc_reader {
    char *name;
    int fd, own_fd;
    trc_read_fn fn;
    void *ctx;
    trcf_scanner *scan;
    trc_status fatal;         /* sticky error returned by every later next() */
    int eof;
    char err[TRCR_DETAIL + 160];

    /* the chunk being read */
    int in_chunk;
    trcf_rec_iter it;
    int64_t tcur;
    uint64_t chunk_off;
    int64_t tcur_before;      /* cursor before the current record */
    int need_header;          /* next record must be SEGMENT_HEADER */
    uint64_t n_bad, n_undef;  /* records dropped in this chunk */
    char bad_first[TRCR_DETAIL], undef_first[TRCR_DETAIL];
    const char *framing;      /* why the rest of the chunk was dropped, or NULL */
    size_t framing_off;

    /* the segment */
    int have_segment;         /* a SEGMENT chunk started the current segment */
    int skip_segment;         /* a must-understand record made it unreadable */
    int after_damage;         /* damage since the last good chunk */
    uint64_t expect_seq;
    uint64_t period;
    uint8_t seg_major, seg_minor;
    uint32_t n_segments;
    trcr_idmap strings, frames, stacks, threads, counters;

    trcm_model model;
    trc_event ev;
    char ev_detail[TRCR_DETAIL];
    trc_event pend[TRCR_MAX_PENDING];
    char pend_detail[TRCR_MAX_PENDING][TRCR_DETAIL];
    unsigned n_pend;
    int told_kind, told_flags;
    int have_time;
    trc_reader_stats stats;
};

static inline void trcr_time(trc_reader *r, int64_t t)
{
    if (!r->have_time) {
        r->have_time = 1;
        r->stats.first_ns = r->stats.last_ns = t;
        return;
    }
    if (t < r->stats.first_ns)
        r->stats.first_ns = t;
    if (t > r->stats.last_ns)
        r->stats.last_ns = t;
}

/* ---- lib/reader.c ---- */

/* Queue a reader-made loss event (yielded before anything else) and make
 * it the reader's last error text.  detail is printf-style. */
void trcr_push_loss(trc_reader *r, trc_loss_kind kind, uint64_t count, uint64_t offset,
                    const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* ---- lib/reader_rec.c ---- */

/* Turn one record of a known type into *ev.  TRC_OK: *ev is an event;
 * TRC_ERR_EOF: consumed without an event (a definition, or a record
 * dropped and counted as bad/undefined); TRC_ERR_NOMEM: fatal. */
trc_status trcr_record(trc_reader *r, const trcf_record *rec, trc_event *ev);

/* Note a record dropped as corrupt (its time fields do not count: the
 * cursor goes back to r->tcur_before) / as referring to an undefined id
 * (its time fields count).  Each kind is summarised by one loss per
 * chunk. */
void trcr_bad(trc_reader *r, const trcf_record *rec, const char *why);
void trcr_undef(trc_reader *r, const trcf_record *rec, const char *what, uint64_t id);

/* Forget the segment's local ids (a SEGMENT chunk starts). */
void trcr_reset_segment(trc_reader *r);
void trcr_idmaps_free(trc_reader *r);

/* SAMPLE, the hot record: decode, map ids, fill *ev. */
static inline trc_status trcr_sample(trc_reader *r, const trcf_record *rec, trc_event *ev)
{
    trcf_sample s;
    const char *why = NULL;
    int ok = 1;
    uint32_t thread, stack;
    trc_status st = trcf_decode_sample(rec->body, rec->len, &r->tcur, &s, &why);

    if (st != TRC_OK) {
        trcr_bad(r, rec, why);
        return TRC_ERR_EOF;
    }
    thread = trcr_map(&r->threads, s.thread, &ok);
    if (!ok || thread == 0) {
        trcr_undef(r, rec, "thread", s.thread);
        return TRC_ERR_EOF;
    }
    /* stack 0 is the empty stack: always defined (spec §6). */
    stack = s.stack == 0 ? 0 : trcr_map(&r->stacks, s.stack, &ok);
    if (!ok) {
        trcr_undef(r, rec, "stack", s.stack);
        return TRC_ERR_EOF;
    }
    ev->type = TRC_EV_SAMPLE;
    ev->u.sample.time_ns = s.time;
    ev->u.sample.thread = thread;
    ev->u.sample.stack = stack;
    ev->u.sample.flags = (uint32_t)(s.flags & TRCF_SAMPLE_PUBLIC_MASK);
    ev->u.sample.weight_ns = (s.flags & TRCF_SAMPLE_HAS_WEIGHT) ? s.weight : r->period;
    ev->u.sample.count = s.count > UINT32_MAX ? UINT32_MAX : (uint32_t)s.count;
    ev->u.sample.span_ns = s.span;
    trcr_time(r, s.time);
    if (s.span)
        trcr_time(r, (int64_t)((uint64_t)s.time + s.span));
    return TRC_OK;
}

#endif /* TRC_LIB_READER_INT_H */
