/*
 * lib/reader.c — trc_reader: input, chunk policy, loss events, the public
 * API (include/trc/trc.h "Reader"; spec/trc-format.md §4, §5, §8).
 * Records become events in lib/reader_rec.c.
 *
 * trc_reader_next is a pull loop: queued reader-made losses first, then
 * the next record of the current chunk, then the next chunk from the
 * scanner (format/scan.h).  Chunk policy applied here:
 *   - damaged region / truncated tail: one TRC_LOSS_CHUNK_DAMAGED /
 *     TRC_LOSS_TRUNCATED (count 1, offset and bytes in the detail);
 *   - a sequence gap in a segment: TRC_LOSS_CHUNK_MISSING (count = chunks
 *     missing), unless damage just before already accounts for it;
 *   - reserved chunk kind: skipped and counted, not a loss; reserved flag
 *     bit: skipped, reported once per input as lost (TRC_LOSS_OTHER);
 *     both are sequence-checked like DATA chunks;
 *   - a DATA chunk whose sequence goes back: reported, read with empty
 *     tables (it cannot share this segment's definitions), which stay
 *     empty for the chunks after it ([R-CHUNK-13]);
 *   - no gap or step back is reported right after damage ([R-SYNC-3]);
 *   - major version != 1: TRC_ERR_VERSION (fatal), first chunk or not;
 *   - a must-understand record of unknown type: loss, then the rest of the
 *     segment is skipped up to the next SEGMENT chunk;
 *   - per chunk, a framing error (rest of chunk dropped, CHUNK_DAMAGED),
 *     corrupt records (OTHER) and records with undefined references
 *     (UNDEFINED_REF) are each summarised as one loss when the chunk ends.
 */
#include "lib/reader_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lib/util/alloc.h"

/* ---- losses and messages ---- */

void trcr_push_loss(trc_reader *r, trc_loss_kind kind, uint64_t count, uint64_t offset,
                    const char *fmt, ...)
{
    trc_event *e;
    char *d;
    va_list ap;

    if (r->n_pend >= TRCR_MAX_PENDING)
        return;     /* cannot happen: at most 4 are queued between yields */
    e = &r->pend[r->n_pend];
    d = r->pend_detail[r->n_pend];
    r->n_pend++;
    va_start(ap, fmt);
    vsnprintf(d, TRCR_DETAIL, fmt, ap);
    va_end(ap);
    memset(e, 0, sizeof *e);
    e->type = TRC_EV_LOSS;
    e->offset = offset;
    e->u.loss.kind = kind;
    e->u.loss.count = count;
    e->u.loss.pid = -1;
    e->u.loss.offset = offset;
    e->u.loss.from_reader = 1;
    snprintf(r->err, sizeof r->err, "%s: offset 0x%llx: %s", r->name, (unsigned long long)offset, d);
}

static trc_status fail(trc_reader *r, trc_status st, uint64_t offset, const char *what)
{
    snprintf(r->err, sizeof r->err, "%s: offset 0x%llx: %s", r->name, (unsigned long long)offset,
             what);
    r->fatal = st;
    return st;
}

/* Pop the oldest queued loss into r->ev. */
static void pop_loss(trc_reader *r)
{
    unsigned i;

    r->ev = r->pend[0];
    memcpy(r->ev_detail, r->pend_detail[0], TRCR_DETAIL);
    r->ev.u.loss.detail = r->ev_detail;
    for (i = 1; i < r->n_pend; i++) {
        r->pend[i - 1] = r->pend[i];
        memcpy(r->pend_detail[i - 1], r->pend_detail[i], TRCR_DETAIL);
    }
    r->n_pend--;
    r->stats.losses++;
}

/* The chunk is used up: summarise what was dropped in it (at most three
 * losses, so the queue of TRCR_MAX_PENDING never overflows). */
static void finish_chunk(trc_reader *r)
{
    r->in_chunk = 0;
    /* A SEGMENT chunk that holds no record lacks its header like one
     * that starts with another record ([R-HDR-1]); if framing broke
     * before the first record, that damage report covers it. */
    if (r->need_header && !r->framing && r->n_bad++ == 0)
        snprintf(r->bad_first, sizeof r->bad_first,
                 "SEGMENT chunk holds no record: SEGMENT_HEADER missing");
    r->need_header = 0;
    if (r->framing) {
        trcr_push_loss(r, TRC_LOSS_CHUNK_DAMAGED, 1, r->chunk_off,
                       "%s at payload offset 0x%zx; rest of the chunk dropped", r->framing,
                       r->framing_off);
        r->stats.damaged_chunks++;
    }
    if (r->n_bad)
        trcr_push_loss(r, TRC_LOSS_OTHER, r->n_bad, r->chunk_off, "%llu corrupt record%s dropped (first %s)",
                       (unsigned long long)r->n_bad, r->n_bad == 1 ? "" : "s", r->bad_first);
    if (r->n_undef)
        trcr_push_loss(r, TRC_LOSS_UNDEFINED_REF, r->n_undef, r->chunk_off,
                       "%llu record%s dropped: reference to an undefined id (first %s)",
                       (unsigned long long)r->n_undef, r->n_undef == 1 ? "" : "s", r->undef_first);
    r->n_bad = r->n_undef = 0;
    r->framing = NULL;
}

/* ---- chunks ---- */

/* The sequence number of a chunk that is not a SEGMENT chunk, DATA or
 * skipped for a reserved kind or flag alike ([R-CHUNK-13], [R-CHUNK-5]).
 * With no segment in force expect_seq is 0, so a trace whose SEGMENT
 * chunk is gone reports the chunks before this one missing ([R-DMG-5]).
 * Neither report is made when damage was reported since the last chunk
 * read: the damaged bytes account for it ([R-SYNC-3]). */
static void check_sequence(trc_reader *r, const trcf_chunk_header *h, uint64_t offset)
{
    if (h->seq > r->expect_seq && !r->after_damage) {
        trcr_push_loss(r, TRC_LOSS_CHUNK_MISSING, h->seq - r->expect_seq, offset,
                       "%llu chunk%s missing before this one (sequence %llu, expected %llu)",
                       (unsigned long long)(h->seq - r->expect_seq),
                       h->seq - r->expect_seq == 1 ? "" : "s", (unsigned long long)h->seq,
                       (unsigned long long)r->expect_seq);
    } else if (h->seq == 0 && r->expect_seq == 0 && !r->after_damage) {
        /* The input starts with a DATA chunk numbered 0: nothing is
         * missing by number, but the SEGMENT chunk is ([R-SEG-1]). */
        trcr_push_loss(r, TRC_LOSS_OTHER, 0, offset,
                       "DATA chunk numbered 0 with no SEGMENT chunk before it");
    } else if (h->seq < r->expect_seq) {
        /* Repeated, or from a recording whose SEGMENT chunk was lost:
         * read it on its own rather than against this segment's
         * definitions, which it does not share. */
        if (!r->after_damage)
            trcr_push_loss(r, TRC_LOSS_OTHER, 0, offset,
                           "chunk sequence went back from %llu to %llu; read without the "
                           "segment's definitions",
                           (unsigned long long)(r->expect_seq - 1), (unsigned long long)h->seq);
        trcr_reset_segment(r);
        r->have_segment = 0;
    }
    r->expect_seq = h->seq + 1;
}

static void start_chunk(trc_reader *r, const trcf_chunk_info *ci)
{
    const trcf_chunk_header *h = &ci->h;

    r->stats.chunks++;
    if (h->kind == TRCF_KIND_SEGMENT) {
        trcr_reset_segment(r);
        r->have_segment = 1;
        r->skip_segment = 0;
        r->need_header = 1;
        r->seg_major = h->major;
        r->seg_minor = h->minor;
        /* Numbered otherwise than 0 ([R-CHUNK-4]): its DATA chunks still
         * count from 0, so expecting from its number would call them
         * all repeated and drop the definitions they share with it. */
        if (h->seq != 0)
            trcr_push_loss(r, TRC_LOSS_OTHER, 0, ci->offset,
                           "SEGMENT chunk numbered %llu, not 0; read as chunk 0",
                           (unsigned long long)h->seq);
        r->expect_seq = 1;
    } else {
        check_sequence(r, h, ci->offset);
        r->need_header = 0;
    }
    r->after_damage = 0;
    r->in_chunk = 1;
    trcf_rec_iter_init(&r->it, ci->payload, h->decoded_len);
    r->tcur = h->base_time;
    r->chunk_off = ci->offset;
}

/* Act on one scanner result.  Returns TRC_OK to go on, or a fatal status. */
static trc_status take_chunk(trc_reader *r, const trcf_chunk_info *ci)
{
    switch (ci->state) {
    case TRCF_CHUNK_OK:
        start_chunk(r, ci);
        return TRC_OK;
    case TRCF_CHUNK_DAMAGED:
        r->stats.damaged_chunks++;
        trcr_push_loss(r, TRC_LOSS_CHUNK_DAMAGED, 1, ci->offset, "%s (%llu bytes skipped)", ci->why,
                       (unsigned long long)ci->length);
        /* A verified header tells which sequence number was lost. */
        if (ci->have_header && ci->h.kind == TRCF_KIND_DATA && ci->h.seq == r->expect_seq)
            r->expect_seq++;
        else
            r->after_damage = 1;
        return TRC_OK;
    case TRCF_CHUNK_TRUNCATED:
        trcr_push_loss(r, TRC_LOSS_TRUNCATED, 1, ci->offset,
                       "%s: input ends after %llu of its bytes", ci->why, (unsigned long long)ci->length);
        return TRC_OK;
    case TRCF_CHUNK_SKIPPED:
        break;
    }
    if (ci->h.major != TRC_FORMAT_MAJOR) {
        char what[TRCR_DETAIL];
        snprintf(what, sizeof what, "format version %u.%u is not supported (this reader reads %d.x)%s",
                 ci->h.major, ci->h.minor, TRC_FORMAT_MAJOR,
                 r->stats.chunks ? "; reading stopped" : "");
        return fail(r, TRC_ERR_VERSION, ci->offset, what);
    }
    /* A reserved kind or flag: still a chunk of the segment for
     * sequence purposes ([R-CHUNK-5]), checked like a DATA chunk. */
    check_sequence(r, &ci->h, ci->offset);
    r->after_damage = 0;
    r->stats.skipped_records++;
    if ((ci->h.flags & TRCF_FLAGS_RESERVED) && !r->told_flags++)
        trcr_push_loss(r, TRC_LOSS_OTHER, 1, ci->offset,
                       "chunk skipped: reserved flag set (flags 0x%02x); its content is lost",
                       ci->h.flags);
    /* A reserved kind is not damage and not a loss [R-CHUNK-5]: counted only. */
    return TRC_OK;
}

/* The next event of the current chunk: TRC_OK, TRC_ERR_EOF at its end,
 * TRC_ERR_NOMEM. */
static trc_status next_record(trc_reader *r, trc_event *ev)
{
    trcf_record rec;
    const char *why = NULL;
    trc_status st;

    for (;;) {
        st = trcf_record_next(&r->it, &rec, &why);
        if (st == TRC_ERR_EOF)
            return st;
        if (st != TRC_OK) {
            r->framing = why;
            r->framing_off = rec.offset;
            return TRC_ERR_EOF;
        }
        r->stats.records++;
        r->tcur_before = r->tcur;
        /* [R-HDR-1]: whatever the first record of a SEGMENT chunk is, if
         * it is not SEGMENT_HEADER the header is missing (one report);
         * the record itself is then read like any other. */
        if (r->need_header && rec.type != TRCF_SEGMENT_HEADER) {
            trcr_bad(r, &rec, "SEGMENT chunk does not start with SEGMENT_HEADER");
            r->need_header = 0;
        }
        if (rec.type == TRCF_SAMPLE) {
            st = trcr_sample(r, &rec, ev);
            if (st == TRC_OK)
                ev->offset = r->chunk_off;
            if (st != TRC_ERR_EOF)
                return st;
            continue;
        }
        if (rec.type == 0 || rec.type > TRCF_TYPE_MAX) {
            if (rec.must_understand) {
                trcr_push_loss(r, TRC_LOSS_OTHER, 1, r->chunk_off,
                               "record type %llu must be understood; rest of the segment skipped",
                               (unsigned long long)rec.type);
                r->skip_segment = 1;
                return TRC_ERR_EOF;
            }
            r->stats.skipped_records++;
            continue;
        }
        st = trcr_record(r, &rec, ev);
        if (st == TRC_OK)
            ev->offset = r->chunk_off;
        if (st != TRC_ERR_EOF)
            return st;
    }
}

trc_status trc_reader_next(trc_reader *r, const trc_event **ev)
{
    trcf_chunk_info ci;
    trc_status st;

    if (!r || !ev)
        return TRC_ERR_ARG;
    for (;;) {
        if (r->fatal)
            return r->fatal;
        if (r->n_pend) {
            pop_loss(r);
            *ev = &r->ev;
            return TRC_OK;
        }
        if (r->in_chunk) {
            st = next_record(r, &r->ev);
            if (st == TRC_OK) {
                *ev = &r->ev;
                return TRC_OK;
            }
            if (st != TRC_ERR_EOF)
                return fail(r, st, r->chunk_off, trc_status_str(st));
            finish_chunk(r);
            continue;
        }
        if (r->eof)
            return TRC_ERR_EOF;
        st = trcf_chunk_next(r->scan, &ci);
        r->stats.bytes = trcf_scanner_offset(r->scan);
        if (st == TRC_ERR_EOF) {
            r->eof = 1;
            continue;
        }
        if (st == TRC_ERR_NOT_TRC) {
            char what[TRCR_DETAIL];
            snprintf(what, sizeof what, "not a .trc file (%s)", ci.why);
            return fail(r, st, 0, what);
        }
        if (st == TRC_ERR_IO) {
            char what[TRCR_DETAIL];
            errno = trcf_scanner_errno(r->scan);
            snprintf(what, sizeof what, "read error: %s", strerror(errno));
            return fail(r, st, trcf_scanner_offset(r->scan), what);
        }
        if (st != TRC_OK)
            return fail(r, st, trcf_scanner_offset(r->scan), trc_status_str(st));
        if (ci.state == TRCF_CHUNK_OK && r->skip_segment && ci.h.kind != TRCF_KIND_SEGMENT) {
            r->stats.chunks++;
            continue;
        }
        st = take_chunk(r, &ci);
        if (st != TRC_OK)
            return st;
    }
}

/* ---- opening ---- */

static long fd_read(void *ctx, void *buf, size_t len)
{
    const trc_reader *r = ctx;
    ssize_t n;

    do
        n = read(r->fd, buf, len);
    while (n < 0 && errno == EINTR);
    return (long)n;
}

/* A reader over fn/ctx; ctx NULL means the reader itself (fd input). */
static trc_reader *reader_new(trc_read_fn fn, void *ctx, int fd, const char *name, trc_status *st)
{
    trc_reader *r = trc_calloc(1, sizeof *r);
    trc_status s = TRC_ERR_NOMEM;

    if (!r)
        goto fail;
    r->fd = fd;
    r->fn = fn;
    r->ctx = ctx ? ctx : r;
    r->period = 1000000;
    trcm_init(&r->model);
    r->name = trc_strdup(name ? name : "<input>");
    r->scan = r->name ? trcf_scanner_new(r->fn, r->ctx, &s) : NULL;
    if (!r->scan) {
        trc_reader_free(r);
        goto fail;
    }
    if (st)
        *st = TRC_OK;
    return r;
fail:
    if (st)
        *st = TRC_ERR_NOMEM;
    return NULL;
}

trc_reader *trc_reader_open_callback(trc_read_fn fn, void *ctx, const char *name, trc_status *st)
{
    if (!fn) {
        if (st)
            *st = TRC_ERR_ARG;
        return NULL;
    }
    return reader_new(fn, ctx, -1, name, st);
}

trc_reader *trc_reader_open_fd(int fd, const char *name, trc_status *st)
{
    if (fd < 0) {
        if (st)
            *st = TRC_ERR_ARG;
        return NULL;
    }
    return reader_new(fd_read, NULL, fd, name, st);
}

trc_reader *trc_reader_open_path(const char *path, trc_status *st)
{
    trc_reader *r;
    int fd, e;

    if (!path) {
        if (st)
            *st = TRC_ERR_ARG;
        return NULL;
    }
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (st)
            *st = TRC_ERR_IO;
        return NULL;
    }
    r = trc_reader_open_fd(fd, path, st);
    if (!r) {
        e = errno;
        close(fd);
        errno = e;
        return NULL;
    }
    r->own_fd = 1;
    return r;
}

void trc_reader_free(trc_reader *r)
{
    if (!r)
        return;
    trcf_scanner_free(r->scan);
    trcr_idmaps_free(r);
    trcm_cleanup(&r->model);
    if (r->own_fd)
        close(r->fd);
    trc_free(r->name);
    trc_free(r);
}

/* ---- queries ---- */

const char *trc_reader_error(const trc_reader *r)
{
    if (!r)
        return "no reader";
    return r->err;
}

const char *trc_reader_name(const trc_reader *r)
{
    return r ? r->name : "";
}

const trc_frame *trc_reader_frame(const trc_reader *r, uint32_t id)
{
    if (!r || id == 0 || id > r->model.n_frames)
        return NULL;
    return r->model.frames[id];
}

const trc_stack *trc_reader_stack(const trc_reader *r, uint32_t id)
{
    static const trc_stack empty = { 0, 0, 0, 0 };

    if (!r)
        return NULL;
    if (id == 0)
        return &empty;
    if (id > r->model.n_stacks)
        return NULL;
    return r->model.stacks[id];
}

const trc_thread *trc_reader_thread(const trc_reader *r, uint32_t id)
{
    if (!r || id == 0 || id > r->model.n_threads)
        return NULL;
    return r->model.threads[id];
}

const trc_process *trc_reader_process_by_pid(const trc_reader *r, int64_t pid)
{
    return r ? trcm_process_by_pid(&r->model, pid) : NULL;
}

const trc_counter_def *trc_reader_counter(const trc_reader *r, uint32_t id)
{
    if (!r || id == 0 || id > r->model.n_counters)
        return NULL;
    return r->model.counters[id];
}

const trc_gpu_device *trc_reader_gpu_device(const trc_reader *r, uint32_t device)
{
    return r ? trcm_device_by_number(&r->model, device) : NULL;
}

uint32_t trc_reader_frame_count(const trc_reader *r)
{
    return r ? r->model.n_frames : 0;
}

uint32_t trc_reader_stack_count(const trc_reader *r)
{
    return r ? r->model.n_stacks : 0;
}

uint32_t trc_reader_thread_count(const trc_reader *r)
{
    return r ? r->model.n_threads : 0;
}

void trc_reader_get_stats(const trc_reader *r, trc_reader_stats *out)
{
    if (!out)
        return;
    if (!r) {
        memset(out, 0, sizeof *out);
        return;
    }
    *out = r->stats;
}
