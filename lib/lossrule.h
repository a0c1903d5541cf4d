/*
 * lib/lossrule.h — when losses the recorder wrote into a trace (LOSS
 * records, spec §7.18) and a recording's missing end (SEGMENT_END, spec
 * §7.20) are worth a warning and exit status 1 (docs/exit-codes.md).
 * One rule for the converters, `trc-dump --check` and trec's closing
 * line, so that they cannot disagree.  Internal API, not installed.
 *
 * Ticks that came late, were missed, or gave a torn stack are facts about
 * sampling on a busy machine, not damage: they bias a profile only when
 * they are a noticeable share of the ticks, so they count only above
 * LOSSRULE_LIMIT_PERCENT of them, and only in a recording long enough
 * for a share to mean something (LOSSRULE_MIN_TICKS) in which at least
 * one stack was read (missed ticks of a program that is not Python, or
 * not yet, lost nothing).  GPU records dropped by CUPTI always count:
 * each is a kernel, copy or API call missing from the GPU totals, and
 * CUPTI drops them in bursts, not at random.  So do losses of other
 * kinds the recorder wrote (TRC_LOSS_OTHER): nothing says what share
 * of what they are.
 */
#ifndef TRC_LIB_LOSSRULE_H
#define TRC_LIB_LOSSRULE_H

#include <stdint.h>

#include "trc/trc.h"

/* Sampling losses over this share of the ticks make a warning.  The
 * docs state the same figure; tests/e2e/conv_exit_codes.sh compares. */
#define LOSSRULE_LIMIT_PERCENT 5
/* Fewer ticks than this are too short a run for a share to mean anything. */
#define LOSSRULE_MIN_TICKS 100

/* What a trace says about its own recording, counted while reading. */
typedef struct lossrule_tally {
    uint64_t samples;      /* samples taken: SAMPLE counts (a REPEAT counts `count`) */
    uint64_t missed;       /* TRC_LOSS_SAMPLES_MISSED counts */
    uint64_t invalid;      /* TRC_LOSS_SAMPLES_INVALID counts */
    uint64_t late;         /* TRC_LOSS_SAMPLES_LATE counts (these samples were kept) */
    uint64_t gpu_dropped;  /* TRC_LOSS_GPU_DROPPED counts */
    uint64_t other;        /* other kinds the recorder wrote (TRC_LOSS_OTHER: a GPU
                              subscription refused...), 1 for a count of 0 */
    uint64_t segments;     /* segments begun */
    uint64_t unended;      /* segments that ended without their SEGMENT_END and
                              without damage (which explains a missing end) */
    int open;              /* the current segment has not met its SEGMENT_END */
    int damaged;           /* the reader met damage in the current segment */
} lossrule_tally;

/* Count one event the reader yielded (any type; only a few matter).
 * Reader-made losses are damage, not the recording's: they are only
 * noted, so that the end record lost with a damaged or cut chunk is not
 * blamed on the recorder as well. */
void lossrule_event(lossrule_tally *t, const trc_event *ev);
/* The input ended (or reading stopped): an open segment is unended. */
void lossrule_end(lossrule_tally *t);

/* All ticks: samples taken + missed + invalid, each as the trace counts
 * it (a missed tick counts once however many threads it would have
 * sampled; an invalid sample is one thread's). */
uint64_t lossrule_ticks(uint64_t samples, uint64_t missed, uint64_t invalid);
/* Percentage of those ticks that were missed, invalid or late (0..100;
 * 0 without ticks). */
double lossrule_percent(uint64_t samples, uint64_t missed, uint64_t invalid, uint64_t late);
/* 1 when missed, invalid and late ticks are over LOSSRULE_LIMIT_PERCENT
 * of at least LOSSRULE_MIN_TICKS ticks and some stack was read (samples
 * or invalid ones); 0 otherwise. */
int lossrule_sampling_over(uint64_t samples, uint64_t missed, uint64_t invalid, uint64_t late);
/* 1 when any sampling loss at all was recorded (what --strict reports). */
int lossrule_sampling_any(const lossrule_tally *t);

/* 1 when the recorded losses call for a warning: sampling losses over
 * the rule, any GPU record dropped, any loss of another kind, or
 * (strict) any recorded loss. */
int lossrule_warns(const lossrule_tally *t, int strict);

#endif /* TRC_LIB_LOSSRULE_H */
