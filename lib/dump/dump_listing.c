/*
 * lib/dump/dump_listing.c — the default trc-dump listing, in the spirit
 * of SQLite's showdb: one line per chunk (spec §4: offset, kind, sequence,
 * flags, stored/decoded length, base time, CRC verdict) and one indented
 * line per record (spec §5, §7: offset in the payload, type, length,
 * decoded fields).  Works on raw bytes through the chunk scanner of
 * format/scan.h, so damaged regions, skipped chunks, unknown records and
 * corrupt records are shown where they are instead of being hidden.
 *
 * Checks made here are the ones visible at this level: sequence numbers
 * ([R-CHUNK-13]), SEGMENT_HEADER placement ([R-SEG-2]), record framing
 * ([R-REC-1]), record bodies ([R-REC-12]), must-understand ([R-REC-5]),
 * other major versions ([R-CAT-2]).  Id tables are not checked: that is
 * --check's job, through the real reader.
 */
#include "lib/dump/dump.h"
#include "lib/dump/dump_int.h"

#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "format/record.h"
#include "format/scan.h"

typedef struct listing {
    FILE *out;
    const dump_opts *o;
    dump_strtab strs;
    uint64_t expected_seq;
    int have_segment;        /* a SEGMENT chunk was read */
    int segment_dead;        /* an unknown must-understand record was met */
    int after_damage;        /* damage reported since the last chunk read */
    int told_flags;          /* a reserved-flag chunk was reported */
    int damaged;
    uint64_t chunks;
} listing;

static void problem(listing *l, uint64_t off, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void problem(listing *l, uint64_t off, const char *fmt, ...)
{
    char what[512], line[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    l->damaged = 1;
    snprintf(line, sizeof line, "%s: offset 0x%" PRIx64 ": %s", l->o->name, off, what);
    if (l->o->problem)
        l->o->problem(l->o->problem_ctx, line);
}

static const char *kind_name(uint8_t kind)
{
    return kind == 1 ? "SEGMENT" : kind == 2 ? "DATA" : "kind?";
}

static void hex_lines(FILE *out, const uint8_t *p, size_t n, const char *indent)
{
    size_t i;
    for (i = 0; i < n; i++) {
        if (i % 16 == 0)
            fprintf(out, "%s%04zx:", indent, i);
        fprintf(out, " %02x", p[i]);
        if (i % 16 == 15 || i + 1 == n)
            fputc('\n', out);
    }
}

/* The scanner verifies the payload CRC of every chunk it yields as good
 * or skips for its kind or flags; only another major is unchecked. */
static void chunk_line(listing *l, const trcf_chunk_info *ci)
{
    const trcf_chunk_header *h = &ci->h;
    fprintf(l->out, "0x%08" PRIx64 " %s", ci->offset, kind_name(h->kind));
    if (h->kind != 1 && h->kind != 2)
        fprintf(l->out, "(%u)", h->kind);
    fprintf(l->out, " v%u.%u seq=%" PRIu64 " flags=0x%02x stored=%" PRIu32 " raw=%" PRIu32
                    " base=", h->major, h->minor, h->seq, h->flags, h->stored_len, h->decoded_len);
    dump_time(l->out, h->base_time);
    fprintf(l->out, " crc=%s\n", h->major == TRC_FORMAT_MAJOR ? "ok" : "unchecked");
}

/* Sequence numbers within a segment (spec §4.7), by the reader's rules:
 * no report of a gap or a step back right after reported damage, which
 * accounts for it ([R-SYNC-3]); after a step back the segment's strings
 * are forgotten, as the reader forgets its tables ([R-CHUNK-13]). */
static void check_seq(listing *l, const trcf_chunk_info *ci)
{
    uint64_t seq = ci->h.seq;
    int quiet = l->after_damage;

    l->after_damage = 0;
    if (ci->h.kind == 1) {
        if (seq != 0)
            problem(l, ci->offset, "SEGMENT chunk with sequence %" PRIu64 ", not 0", seq);
        l->expected_seq = 1;
        return;
    }
    if (!l->have_segment && l->chunks == 1) {
        problem(l, ci->offset, "input starts with a DATA chunk (sequence %" PRIu64 ")", seq);
    } else if (seq > l->expected_seq) {
        if (!quiet) {
            fprintf(l->out, "  ! %" PRIu64 " chunk(s) missing before this one\n",
                    seq - l->expected_seq);
            problem(l, ci->offset, "%" PRIu64 " chunk(s) missing (sequence %" PRIu64
                    ", expected %" PRIu64 ")", seq - l->expected_seq, seq, l->expected_seq);
        }
    } else if (seq < l->expected_seq) {
        if (!quiet)
            problem(l, ci->offset, "sequence went back to %" PRIu64 " (expected %" PRIu64 ")",
                    seq, l->expected_seq);
        dump_strtab_reset(&l->strs);
    }
    l->expected_seq = seq + 1;
}

/* A damaged chunk whose header was verified and names the expected DATA
 * chunk uses up that number; any other damage leaves the numbers
 * unknown (the reader's rule, lib/reader.c). */
static void damaged_chunk(listing *l, const trcf_chunk_info *ci)
{
    if (ci->state == TRCF_CHUNK_DAMAGED && ci->have_header && ci->h.kind == 2 &&
        ci->h.seq == l->expected_seq)
        l->expected_seq++;
    else
        l->after_damage = 1;
}

/* One record: header line, fields, and the checks of this level. */
static int record_line(listing *l, const trcf_chunk_info *ci, const trcf_record *rec,
                       int first, int64_t *tcur)
{
    char nbuf[32];
    trcf_body b;
    const char *why = NULL;
    int64_t saved = *tcur;
    uint64_t abs = ci->offset + 40 + rec->offset;   /* payload offset if not compressed */
    trc_status st;

    fprintf(l->out, "  +0x%04zx %s%s len=%zu", rec->offset,
            dump_record_name(rec->type, nbuf, sizeof nbuf), rec->must_understand ? "!" : "",
            rec->len);
    if (ci->h.flags & 1)
        abs = ci->offset;    /* inside a compressed payload: name the chunk */
    if (first && ci->h.kind == 1 && rec->type != TRCF_SEGMENT_HEADER)
        problem(l, abs, "SEGMENT chunk does not start with SEGMENT_HEADER");
    if (rec->type == TRCF_SEGMENT_HEADER && !(first && ci->h.kind == 1))
        problem(l, abs, "SEGMENT_HEADER outside the start of a SEGMENT chunk");
    if (!trcf_type_name(rec->type)) {
        if (rec->must_understand) {
            fputs(" must-understand: rest of segment unreadable\n", l->out);
            problem(l, abs, "record type %" PRIu64 " must be understood; rest of segment "
                    "skipped", rec->type);
            l->segment_dead = 1;
            return -1;
        }
        fputs(" skipped\n", l->out);
        return 0;
    }
    st = trcf_decode(rec->type, rec->body, rec->len, tcur, &b, &why);
    if (st != TRC_OK) {
        *tcur = saved;           /* [R-TIME-5] */
        fprintf(l->out, " corrupt: %s\n", why ? why : trc_status_str(st));
        problem(l, abs, "corrupt %s record: %s", trcf_type_name(rec->type),
                why ? why : trc_status_str(st));
        return 0;
    }
    if (rec->type == TRCF_STRING &&
        dump_strtab_put(&l->strs, b.string.id, b.string.s.p, b.string.s.len) == TRC_ERR_NOMEM) {
        fputc('\n', l->out);
        return -2;
    }
    dump_fields(l->out, rec->type, &b, &l->strs);
    /* Decoded in full, so its time moved the cursor, but a value with no
     * meaning in this version makes readers skip it (§7.16, §7.17). */
    if ((rec->type == TRCF_MARKER && b.marker.kind > 3) ||
        (rec->type == TRCF_CLOCK_SYNC && (b.clock_sync.domain < 1 || b.clock_sync.domain > 3)))
        fputs(" skipped: value not assigned", l->out);
    fputc('\n', l->out);
    return 0;
}

static int records(listing *l, const trcf_chunk_info *ci)
{
    trcf_rec_iter it;
    trcf_record rec;
    const char *why = NULL;
    int64_t tcur = ci->h.base_time;
    int first = 1, rc;
    trc_status st;

    trcf_rec_iter_init(&it, ci->payload, ci->h.decoded_len);
    while ((st = trcf_record_next(&it, &rec, &why)) == TRC_OK) {
        rc = record_line(l, ci, &rec, first, &tcur);
        if (rc == -2)
            return -1;
        if (l->o->hex)
            hex_lines(l->out, rec.body, rec.len, "      ");
        first = 0;
        if (rc < 0)
            return 0;
    }
    if (st != TRC_ERR_EOF) {
        fprintf(l->out, "  +0x%04zx framing error: %s; rest of chunk dropped\n", rec.offset,
                why ? why : trc_status_str(st));
        problem(l, ci->offset, "record framing broken at payload offset 0x%zx: %s", rec.offset,
                why ? why : trc_status_str(st));
    } else if (first && ci->h.kind == 1) {
        problem(l, ci->offset, "SEGMENT chunk does not start with SEGMENT_HEADER");
    }
    return 0;
}

/* A good chunk.  Returns -1 on memory exhaustion. */
static int good_chunk(listing *l, const trcf_chunk_info *ci)
{
    chunk_line(l, ci);
    if (l->o->hex) {
        /* The header of a good chunk re-encodes to its own bytes. */
        uint8_t hb[TRCF_HEADER_SIZE];
        trcf_header_encode(&ci->h, hb);
        hex_lines(l->out, hb, sizeof hb, "    ");
    }
    if (ci->h.kind == 1) {
        dump_strtab_reset(&l->strs);
        l->have_segment = 1;
        l->segment_dead = 0;
    }
    check_seq(l, ci);
    if (l->segment_dead) {
        fputs("  (segment unreadable after a must-understand record: not decoded)\n", l->out);
        return 0;
    }
    return records(l, ci);
}

int dump_listing(trc_read_fn fn, void *ctx, FILE *out, const dump_opts *o)
{
    listing l;
    trcf_scanner *s;
    trcf_chunk_info ci;
    trc_status st;
    int verdict = DUMP_OK;

    memset(&l, 0, sizeof l);
    l.out = out;
    l.o = o;
    s = trcf_scanner_new(fn, ctx, &st);
    if (!s) {
        problem(&l, 0, "out of memory");
        return DUMP_UNUSABLE;
    }
    while ((st = trcf_chunk_next(s, &ci)) == TRC_OK) {
        l.chunks++;
        if (ci.state == TRCF_CHUNK_OK) {
            if (good_chunk(&l, &ci) < 0) {
                st = TRC_ERR_NOMEM;
                break;
            }
        } else if (ci.state == TRCF_CHUNK_SKIPPED) {
            chunk_line(&l, &ci);
            fprintf(out, "  skipped: %s\n", ci.why);
            if (ci.h.major != TRC_FORMAT_MAJOR) {
                problem(&l, ci.offset, "unsupported format version %u.%u", ci.h.major,
                        ci.h.minor);
                verdict = l.chunks == 1 ? DUMP_UNUSABLE : DUMP_DAMAGED;
                break;
            }
            check_seq(&l, &ci);
            /* Reported for the first such chunk of the input only, as the
             * reader does ([R-CHUNK-7]); the listing still shows each. */
            if ((ci.h.flags & 0xfe) && !l.told_flags++)
                problem(&l, ci.offset, "%s (0x%02x): chunk content lost", ci.why, ci.h.flags);
        } else {
            fprintf(out, "0x%08" PRIx64 " %s length=%" PRIu64 ": %s\n", ci.offset,
                    ci.state == TRCF_CHUNK_DAMAGED ? "DAMAGED" : "TRUNCATED", ci.length, ci.why);
            problem(&l, ci.offset, "%s (%" PRIu64 " bytes)", ci.why, ci.length);
            damaged_chunk(&l, &ci);
        }
    }
    if (st == TRC_ERR_NOT_TRC) {
        problem(&l, 0, "%s", ci.why ? ci.why : "not a .trc file");
        verdict = DUMP_UNUSABLE;
    } else if (st == TRC_ERR_IO || st == TRC_ERR_NOMEM) {
        problem(&l, trcf_scanner_offset(s), "%s", trc_status_str(st));
        verdict = DUMP_UNUSABLE;
    }
    if (verdict == DUMP_OK && l.damaged)
        verdict = DUMP_DAMAGED;
    trcf_scanner_free(s);
    dump_strtab_cleanup(&l.strs);
    return verdict;
}
