/*
 * lib/lossrule.c — the rule that says when recorded losses and a missing
 * segment end are worth a warning (contract in lib/lossrule.h).
 */
#include "lib/lossrule.h"

/* Sums saturate: counts come from hostile input. */
static uint64_t add(uint64_t a, uint64_t b)
{
    return a + b < a ? UINT64_MAX : a + b;
}

void lossrule_event(lossrule_tally *t, const trc_event *ev)
{
    switch (ev->type) {
    case TRC_EV_SEGMENT:
        /* a new segment before the previous one's end: that one was cut
         * (spec §8.7, [R-CAT-1]: a cut recording followed by another) */
        lossrule_end(t);
        t->segments++;
        t->open = 1;
        break;
    case TRC_EV_SEGMENT_END:
        t->open = 0;
        break;
    case TRC_EV_SAMPLE:
        t->samples = add(t->samples, ev->u.sample.count);
        break;
    case TRC_EV_LOSS:
        if (ev->u.loss.from_reader) {
            t->damaged = 1;
            break;
        }
        switch (ev->u.loss.kind) {
        case TRC_LOSS_SAMPLES_MISSED: t->missed = add(t->missed, ev->u.loss.count); break;
        case TRC_LOSS_SAMPLES_INVALID: t->invalid = add(t->invalid, ev->u.loss.count); break;
        case TRC_LOSS_SAMPLES_LATE: t->late = add(t->late, ev->u.loss.count); break;
        case TRC_LOSS_GPU_DROPPED: t->gpu_dropped = add(t->gpu_dropped, ev->u.loss.count); break;
        default: t->other = add(t->other, ev->u.loss.count ? ev->u.loss.count : 1); break;
        }
        break;
    default:
        break;
    }
}

void lossrule_end(lossrule_tally *t)
{
    if (t->open && !t->damaged)
        t->unended++;
    t->open = 0;
    t->damaged = 0;
}

uint64_t lossrule_ticks(uint64_t samples, uint64_t missed, uint64_t invalid)
{
    return add(add(samples, missed), invalid);
}

double lossrule_percent(uint64_t samples, uint64_t missed, uint64_t invalid, uint64_t late)
{
    uint64_t ticks = lossrule_ticks(samples, missed, invalid);
    if (ticks == 0)
        return 0.0;
    double pct = 100.0 * (double)add(add(missed, invalid), late) / (double)ticks;
    return pct > 100.0 ? 100.0 : pct; /* late beyond the samples: hostile counts */
}

int lossrule_sampling_over(uint64_t samples, uint64_t missed, uint64_t invalid, uint64_t late)
{
    if (samples == 0 && invalid == 0)
        return 0;
    if (lossrule_ticks(samples, missed, invalid) < LOSSRULE_MIN_TICKS)
        return 0;
    return lossrule_percent(samples, missed, invalid, late) > LOSSRULE_LIMIT_PERCENT;
}

int lossrule_sampling_any(const lossrule_tally *t)
{
    return t->missed || t->invalid || t->late;
}

int lossrule_warns(const lossrule_tally *t, int strict)
{
    if (t->gpu_dropped || t->other)
        return 1;
    if (strict)
        return lossrule_sampling_any(t);
    return lossrule_sampling_over(t->samples, t->missed, t->invalid, t->late);
}
