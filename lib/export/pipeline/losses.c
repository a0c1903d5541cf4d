/*
 * lib/export/pipeline/losses.c — loss accounting for converters
 * (contract in losses.h).  Whether recorded sampling losses deserve the
 * warning is lib/lossrule.c's rule.
 */
#include "lib/export/pipeline/losses.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void conv_losses_reset(conv_losses *l)
{
    memset(l, 0, sizeof *l);
    l->stopped = TRC_OK;
}

void conv_losses_event(conv_losses *l, const trc_event *ev)
{
    if (ev->type == TRC_EV_LOSS)
        conv_losses_add(l, &ev->u.loss);
    else
        lossrule_event(&l->tally, ev);
}

void conv_losses_end(conv_losses *l)
{
    lossrule_end(&l->tally);
}

void conv_losses_add(conv_losses *l, const trc_loss *loss)
{
    trc_event ev = {.type = TRC_EV_LOSS};
    ev.u.loss = *loss;
    lossrule_event(&l->tally, &ev); /* recorded losses; damage in this segment */
    l->events++;
    switch (loss->kind) {
    case TRC_LOSS_SAMPLES_MISSED:
    case TRC_LOSS_SAMPLES_INVALID:
    case TRC_LOSS_SAMPLES_LATE:
    case TRC_LOSS_GPU_DROPPED:
        break; /* counted in the tally */
    case TRC_LOSS_CHUNK_DAMAGED: l->chunks_damaged += loss->count ? loss->count : 1; break;
    case TRC_LOSS_CHUNK_MISSING: l->chunks_missing += loss->count ? loss->count : 1; break;
    case TRC_LOSS_TRUNCATED: l->truncated = 1; break;
    case TRC_LOSS_UNDEFINED_REF: l->undefined_refs += loss->count ? loss->count : 1; break;
    default: /* the recorder's are the tally's; the reader's are damage */
        if (!l->other_detail[0] && loss->detail)
            snprintf(l->other_detail, sizeof l->other_detail, "%s", loss->detail);
        if (loss->from_reader)
            l->other += loss->count ? loss->count : 1;
        break;
    }
    if (loss->from_reader && !l->have_damage_offset) {
        l->first_damage_offset = loss->offset;
        l->have_damage_offset = 1;
    }
}

int conv_losses_damaged(const conv_losses *l)
{
    return l->chunks_damaged || l->chunks_missing || l->truncated || l->undefined_refs ||
           l->other || l->stopped != TRC_OK;
}

int conv_losses_warns(const conv_losses *l, int strict)
{
    return conv_losses_damaged(l) || l->tally.unended || lossrule_warns(&l->tally, strict);
}

/* Appends ", "-separated parts to buf without overflowing it. */
typedef struct line {
    char *buf;
    size_t n, len;
} line;

static void add(line *ln, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(line *ln, const char *fmt, ...)
{
    if (ln->len + 1 >= ln->n)
        return;
    if (ln->len) {
        int k = snprintf(ln->buf + ln->len, ln->n - ln->len, ", ");
        if (k > 0)
            ln->len = ln->len + (size_t)k < ln->n ? ln->len + (size_t)k : ln->n - 1;
    }
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(ln->buf + ln->len, ln->n - ln->len, fmt, ap);
    va_end(ap);
    if (k > 0)
        ln->len = ln->len + (size_t)k < ln->n ? ln->len + (size_t)k : ln->n - 1;
}

static const char *plural(uint64_t n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

/* The sampling facts as one part: "14 samples missed by the recorder,
 * 13 samples taken late (2.5 % of 1089 ticks)". */
static void add_sampling(line *ln, const lossrule_tally *t)
{
    if (!lossrule_sampling_any(t))
        return;
    char part[256];
    line pl = {part, sizeof part, 0};
    part[0] = '\0';
    if (t->missed)
        add(&pl, "%" PRIu64 " %s missed by the recorder", t->missed,
            plural(t->missed, "sample", "samples"));
    if (t->invalid)
        add(&pl, "%" PRIu64 " invalid %s dropped", t->invalid,
            plural(t->invalid, "sample", "samples"));
    if (t->late)
        add(&pl, "%" PRIu64 " %s taken late", t->late, plural(t->late, "sample", "samples"));
    double pct = lossrule_percent(t->samples, t->missed, t->invalid, t->late);
    uint64_t ticks = lossrule_ticks(t->samples, t->missed, t->invalid);
    if (lossrule_sampling_over(t->samples, t->missed, t->invalid, t->late))
        add(ln, "%s (%.1f %% of %" PRIu64 " ticks, over the %d %% limit)", part, pct, ticks,
            LOSSRULE_LIMIT_PERCENT);
    else
        add(ln, "%s (%.1f %% of %" PRIu64 " ticks)", part, pct, ticks);
}

void conv_losses_describe(const conv_losses *l, char *buf, size_t n)
{
    line ln = {buf, n, 0};
    if (n == 0)
        return;
    buf[0] = '\0';
    const lossrule_tally *t = &l->tally;
    if (t->unended && t->segments > 1)
        add(&ln, "%" PRIu64 " of %" PRIu64 " recordings end without their end record (a "
            "recorder was killed or its output cut)", t->unended, t->segments);
    else if (t->unended)
        add(&ln, "the recording ends without its end record (the recorder was killed or its "
                 "output cut)");
    if (l->chunks_damaged)
        add(&ln, "%" PRIu64 " damaged %s skipped", l->chunks_damaged,
            plural(l->chunks_damaged, "chunk", "chunks"));
    if (l->chunks_missing)
        add(&ln, "%" PRIu64 " missing %s", l->chunks_missing,
            plural(l->chunks_missing, "chunk", "chunks"));
    if (l->undefined_refs)
        add(&ln, "%" PRIu64 " %s referring to lost definitions", l->undefined_refs,
            plural(l->undefined_refs, "record", "records"));
    uint64_t other = l->other + t->other;
    if (other && l->other_detail[0])
        add(&ln, "%s", l->other_detail);
    else if (other)
        add(&ln, "%" PRIu64 " other lost %s", other, plural(other, "item", "items"));
    if (l->truncated)
        add(&ln, "input truncated");
    if (l->stopped != TRC_OK)
        add(&ln, "reading stopped early (%s)",
            l->stop_message[0] ? l->stop_message : trc_status_str(l->stopped));
    if (l->have_damage_offset && ln.len)
        add(&ln, "first damage at offset 0x%" PRIx64, l->first_damage_offset);
    add_sampling(&ln, t);
    if (t->gpu_dropped)
        add(&ln, "%" PRIu64 " GPU %s dropped", t->gpu_dropped,
            plural(t->gpu_dropped, "record", "records"));
}
