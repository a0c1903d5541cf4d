/*
 * lib/export/pipeline/losses.h — loss accounting of the converter
 * pipeline: recorded losses (TRC_EV_LOSS from the recorder, spec §7.18),
 * reader-detected damage (TRC_EV_LOSS with from_reader = 1) and segments
 * that end without their SEGMENT_END (§7.20) add up to one summary, so
 * that a converter prints at most one warning line; whether recorded
 * sampling losses deserve it is lib/lossrule.h's rule.  What a summary
 * means for the exit status is the tools' (tools/common/convert.c).
 * Internal API, prefix conv_losses_.
 */
#ifndef TRC_LIB_EXPORT_PIPELINE_LOSSES_H
#define TRC_LIB_EXPORT_PIPELINE_LOSSES_H

#include <stddef.h>
#include <stdint.h>

#include "trc/trc.h"
#include "lib/lossrule.h"

typedef struct conv_losses {
    uint64_t events;            /* loss events seen */
    lossrule_tally tally;       /* samples, recorded losses, segments without an end */
    uint64_t chunks_damaged, undefined_refs;
    int truncated;
    /* added by losses.c */
    uint64_t chunks_missing, other;   /* TRC_LOSS_CHUNK_MISSING / reader-made _OTHER counts */
    uint64_t first_damage_offset;     /* byte offset of the first reader-made loss */
    int have_damage_offset;
    trc_status stopped;               /* error that ended reading early, TRC_OK if none */
    char stop_message[256];           /* trc_reader_error() at that point */
    char other_detail[160];           /* detail of the first TRC_LOSS_OTHER (either maker) */
} conv_losses;

/* Accounting, one call per event (conv_pipe_run makes them). */
void conv_losses_reset(conv_losses *l);
/* Count one event the reader yielded (any type). */
void conv_losses_event(conv_losses *l, const trc_event *ev);
/* The input ended: a segment still open has no end record. */
void conv_losses_end(conv_losses *l);
void conv_losses_add(conv_losses *l, const trc_loss *loss);
/* 1 if the reader met damage or stopped early. */
int conv_losses_damaged(const conv_losses *l);
/* 1 if the warning (and exit 1) is due: damage, a segment without its
 * end, or recorded losses as lib/lossrule.h rules (strict: any). */
int conv_losses_warns(const conv_losses *l, int strict);
/* One line, no newline, describing what was lost ("" when nothing):
 * "2 damaged chunks skipped, first damage at offset 0x1a3, 120 samples
 * missed by the recorder (9.8 % of 1230 ticks, over the 5 % limit)".
 * Sampling losses are listed whether or not they warn.  Always
 * NUL-terminates buf (n >= 1). */
void conv_losses_describe(const conv_losses *l, char *buf, size_t n);

#endif /* TRC_LIB_EXPORT_PIPELINE_LOSSES_H */
