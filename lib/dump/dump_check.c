/*
 * lib/dump/dump_check.c — `trc-dump --check` (see lib/dump/dump.h): read a
 * whole trace with the public reader and report every problem: damage
 * the reader detects (spec §8.4, reported as loss events with from_reader
 * set, [R-LOSS-1]) and, for each segment read without damage, any
 * disagreement between its SEGMENT_END totals of samples, GPU activities
 * and API calls (spec §7.20) and what the segment actually held.  Then,
 * in one warning line, what the recording itself says: a segment without
 * its SEGMENT_END (the recorder was killed: exit 1), and with --strict
 * any loss the recorder wrote.  Without --strict recorded losses only
 * count in the summary line: they describe the recording, not the file,
 * which --check judges.  Ends with one summary line on `out`.
 */
#include "lib/dump/dump.h"

#include "lib/lossrule.h"

#include <inttypes.h>
#include <stdarg.h>
#include <string.h>


/* What one segment held, to compare with its SEGMENT_END. */
typedef struct seg_tally {
    uint32_t index;
    uint64_t samples, gpu, api, reader_losses;
} seg_tally;

typedef struct check_ctx {
    const dump_opts *o;
    uint64_t problems;
} check_ctx;

static void problem(check_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void problem(check_ctx *c, const char *fmt, ...)
{
    char line[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    c->problems++;
    if (c->o->problem)
        c->o->problem(c->o->problem_ctx, line);
}

static void compare(check_ctx *c, const char *name, uint64_t off, const seg_tally *t,
                    const char *what, uint64_t said, uint64_t found)
{
    if (said != found)
        problem(c, "%s: offset 0x%" PRIx64 ": segment %" PRIu32 " end says %" PRIu64
                   " %s, found %" PRIu64, name, off, t->index, said, what, found);
}

static void check_end(check_ctx *c, const trc_event *ev, const seg_tally *t)
{
    const trc_segment_end *e = &ev->u.segment_end;
    const char *name = c->o->name;

    /* After damage the counts cannot agree; the damage was reported.
     * Threads and processes are not compared: the reader merges them
     * across segments and yields no event for one it already knows. */
    if (t->reader_losses)
        return;
    compare(c, name, ev->offset, t, "samples", e->samples, t->samples);
    compare(c, name, ev->offset, t, "GPU activities", e->gpu_activities, t->gpu);
    compare(c, name, ev->offset, t, "API calls", e->api_calls, t->api);
}

/* The one warning about the recording (not the file): a segment without
 * its end record; with o->strict, any loss the recorder wrote (the share
 * of lib/lossrule.h is shown).  Damage was reported line by line
 * already.  Returns 1 if it warned. */
static int recording_warning(const dump_opts *o, const lossrule_tally *t)
{
    char line[512];
    size_t len = 0;
    int over = lossrule_sampling_over(t->samples, t->missed, t->invalid, t->late);

    line[0] = '\0';
    if (t->unended)
        len += (size_t)snprintf(line, sizeof line, "%s", t->segments > 1
                ? "a recording ends without its end record (its recorder was killed or "
                  "its output cut)"
                : "the recording ends without its end record (the recorder was killed or "
                  "its output cut)");
    if (o->strict && lossrule_sampling_any(t) && len < sizeof line) {
        char limit[48] = "";
        if (over)
            snprintf(limit, sizeof limit, ", over the %d %% limit", LOSSRULE_LIMIT_PERCENT);
        len += (size_t)snprintf(line + len, sizeof line - len,
                                "%srecorded %" PRIu64 " missed, %" PRIu64 " invalid and %" PRIu64
                                " late of %" PRIu64 " ticks (%.1f %%%s)",
                                len ? "; " : "", t->missed, t->invalid, t->late,
                                lossrule_ticks(t->samples, t->missed, t->invalid),
                                lossrule_percent(t->samples, t->missed, t->invalid, t->late),
                                limit);
    }
    if (o->strict && t->gpu_dropped && len < sizeof line)
        len += (size_t)snprintf(line + len, sizeof line - len,
                                "%s%" PRIu64 " GPU record%s dropped by CUPTI", len ? "; " : "",
                                t->gpu_dropped, t->gpu_dropped == 1 ? "" : "s");
    if (o->strict && t->other && len < sizeof line)
        snprintf(line + len, sizeof line - len, "%s%" PRIu64 " other recorded loss%s",
                 len ? "; " : "", t->other, t->other == 1 ? "" : "es");
    if (!line[0])
        return 0;
    if (o->warning) {
        char full[1024];
        snprintf(full, sizeof full, "%s: %s", o->name, line);
        o->warning(o->problem_ctx, full);
    }
    return 1;
}

static const char *verdict_word(int verdict, uint64_t problems, const lossrule_tally *t)
{
    if (verdict == DUMP_UNUSABLE)
        return "unusable";
    if (verdict == DUMP_OK)
        return "ok";
    if (problems)
        return "damaged";
    return t->unended ? "incomplete" : "lossy";
}

int dump_check(trc_reader *r, FILE *out, const dump_opts *o)
{
    check_ctx c = { o, 0 };
    seg_tally t;
    trc_reader_stats stats;
    const trc_event *ev;
    trc_status st;
    uint64_t recorded = 0, events = 0;
    lossrule_tally tally;
    int verdict, warned;

    memset(&t, 0, sizeof t);
    memset(&tally, 0, sizeof tally);
    while ((st = trc_reader_next(r, &ev)) == TRC_OK) {
        events++;
        lossrule_event(&tally, ev);
        switch (ev->type) {
        case TRC_EV_SEGMENT:
            t.index = ev->u.segment->index;
            t.samples = t.gpu = t.api = t.reader_losses = 0;
            break;
        case TRC_EV_SAMPLE:
            t.samples += ev->u.sample.count;
            break;
        case TRC_EV_GPU_KERNEL: case TRC_EV_GPU_MEMCPY:
        case TRC_EV_GPU_MEMSET: case TRC_EV_GPU_SYNC:
            t.gpu++;
            break;
        case TRC_EV_API_CALL:
            t.api++;
            break;
        case TRC_EV_LOSS:
            if (ev->u.loss.from_reader) {
                const char *d = ev->u.loss.detail;
                t.reader_losses++;
                problem(&c, "%s: offset 0x%" PRIx64 ": %s", o->name, ev->u.loss.offset,
                        d && *d ? d : dump_loss_name(ev->u.loss.kind));
            } else {
                recorded++;
            }
            break;
        case TRC_EV_SEGMENT_END:
            check_end(&c, ev, &t);
            break;
        default:
            break;
        }
    }
    if (st != TRC_ERR_EOF)
        problem(&c, "%s", st == TRC_ERR_NOMEM ? "out of memory" : trc_reader_error(r));
    lossrule_end(&tally);
    verdict = dump_status_verdict(st, events > 0);
    if (verdict == DUMP_OK && c.problems)
        verdict = DUMP_DAMAGED;
    warned = verdict != DUMP_UNUSABLE && recording_warning(o, &tally);
    if (verdict == DUMP_OK && warned)
        verdict = DUMP_DAMAGED;

    trc_reader_get_stats(r, &stats);
    fprintf(out,
            "%s: %s: %" PRIu64 " segment%s, %" PRIu64 " chunk%s (%" PRIu64 " damaged), %" PRIu64
            " records (%" PRIu64 " skipped), %" PRIu64 " bytes, %" PRIu64
            " recorded loss%s, %" PRIu64 " problem%s\n",
            o->name, verdict_word(verdict, c.problems, &tally),
            stats.segments, stats.segments == 1 ? "" : "s", stats.chunks,
            stats.chunks == 1 ? "" : "s", stats.damaged_chunks, stats.records,
            stats.skipped_records, stats.bytes, recorded, recorded == 1 ? "" : "es",
            c.problems, c.problems == 1 ? "" : "s");
    return verdict;
}
