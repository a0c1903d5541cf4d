/*
 * losses.c — loss accounting for converters (contract in convert.h):
 * adds up recorded losses (TRC_EV_LOSS from the recorder, spec §7.18) and
 * reader-detected damage (TRC_EV_LOSS with from_reader = 1) so that a
 * converter prints exactly one warning line summarising what was lost.
 */
#include "tools/common/convert.h"

#include <inttypes.h>
#include <string.h>

void conv_losses_reset(conv_losses *l)
{
    memset(l, 0, sizeof *l);
    l->stopped = TRC_OK;
}

void conv_losses_add(conv_losses *l, const trc_loss *loss)
{
    l->events++;
    switch (loss->kind) {
    case TRC_LOSS_SAMPLES_MISSED: l->samples_missed += loss->count; break;
    case TRC_LOSS_SAMPLES_INVALID: l->samples_invalid += loss->count; break;
    case TRC_LOSS_SAMPLES_LATE: l->samples_late += loss->count; break;
    case TRC_LOSS_GPU_DROPPED: l->gpu_dropped += loss->count; break;
    case TRC_LOSS_CHUNK_DAMAGED: l->chunks_damaged += loss->count ? loss->count : 1; break;
    case TRC_LOSS_CHUNK_MISSING: l->chunks_missing += loss->count ? loss->count : 1; break;
    case TRC_LOSS_TRUNCATED: l->truncated = 1; break;
    case TRC_LOSS_UNDEFINED_REF: l->undefined_refs += loss->count ? loss->count : 1; break;
    default:
        if (!l->other && loss->detail)
            snprintf(l->other_detail, sizeof l->other_detail, "%s", loss->detail);
        l->other += loss->count ? loss->count : 1;
        break;
    }
    if (loss->from_reader && !l->have_damage_offset) {
        l->first_damage_offset = loss->offset;
        l->have_damage_offset = 1;
    }
}

int conv_losses_any(const conv_losses *l)
{
    return l->samples_missed || l->samples_invalid || l->gpu_dropped || l->chunks_damaged ||
           l->chunks_missing || l->truncated || l->undefined_refs || l->other ||
           l->stopped != TRC_OK;
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

void conv_losses_describe(const conv_losses *l, char *buf, size_t n)
{
    line ln = {buf, n, 0};
    if (n == 0)
        return;
    buf[0] = '\0';
    if (l->samples_missed)
        add(&ln, "%" PRIu64 " %s missed by the recorder", l->samples_missed,
            plural(l->samples_missed, "sample", "samples"));
    if (l->samples_invalid)
        add(&ln, "%" PRIu64 " invalid %s dropped", l->samples_invalid,
            plural(l->samples_invalid, "sample", "samples"));
    if (l->gpu_dropped)
        add(&ln, "%" PRIu64 " GPU %s dropped", l->gpu_dropped,
            plural(l->gpu_dropped, "record", "records"));
    if (l->chunks_damaged)
        add(&ln, "%" PRIu64 " damaged %s skipped", l->chunks_damaged,
            plural(l->chunks_damaged, "chunk", "chunks"));
    if (l->chunks_missing)
        add(&ln, "%" PRIu64 " missing %s", l->chunks_missing,
            plural(l->chunks_missing, "chunk", "chunks"));
    if (l->undefined_refs)
        add(&ln, "%" PRIu64 " %s referring to lost definitions", l->undefined_refs,
            plural(l->undefined_refs, "record", "records"));
    if (l->other && l->other_detail[0])
        add(&ln, "%s", l->other_detail);
    else if (l->other)
        add(&ln, "%" PRIu64 " other lost %s", l->other, plural(l->other, "item", "items"));
    if (l->truncated)
        add(&ln, "input truncated");
    if (l->stopped != TRC_OK)
        add(&ln, "reading stopped early (%s)",
            l->stop_message[0] ? l->stop_message : trc_status_str(l->stopped));
    if (l->have_damage_offset && ln.len)
        add(&ln, "first damage at offset 0x%" PRIx64, l->first_damage_offset);
}
