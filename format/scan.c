/*
 * format/scan.c — chunk scanner with resynchronisation (see
 * format/scan.h; spec/DESIGN-NOTES.md "Chunk").
 *
 * Buffer: buf[pos, fill) holds unread input; s->off is the input offset
 * of buf[pos].  need() reads until n bytes are buffered, growing the
 * buffer only to the size of the largest chunk met (<= 40 + 16 MiB +
 * 64 KiB, a limit checked on the CRC-verified header before growing).
 * Each read asks for the whole free space, so files are read in big
 * blocks while a live pipe returns as soon as a chunk is complete.
 */
#include "format/scan.h"

#include <errno.h>
#include <string.h>

#include "lib/util/alloc.h"
#include "format/crc32.h"
#include "format/limits.h"

#define SCAN_BLOCK (1u << 20)

struct trcf_scanner {
    trc_read_fn fn;
    void *ctx;
    uint8_t *buf;
    size_t cap, pos, fill;
    uint64_t off;
    int eof, err_no, started;
    trcf_inflater inf;
};

trcf_scanner *trcf_scanner_new(trc_read_fn fn, void *ctx, trc_status *st)
{
    trcf_scanner *s = trc_calloc(1, sizeof *s);

    if (!s) {
        if (st)
            *st = TRC_ERR_NOMEM;
        return NULL;
    }
    s->fn = fn;
    s->ctx = ctx;
    if (st)
        *st = TRC_OK;
    return s;
}

void trcf_scanner_free(trcf_scanner *s)
{
    if (!s)
        return;
    trcf_inflater_cleanup(&s->inf);
    trc_free(s->buf);
    trc_free(s);
}

uint64_t trcf_scanner_offset(const trcf_scanner *s)
{
    return s->off;
}

int trcf_scanner_errno(const trcf_scanner *s)
{
    return s->err_no;
}

static size_t avail(const trcf_scanner *s)
{
    return s->fill - s->pos;
}

static void consume(trcf_scanner *s, size_t n)
{
    s->pos += n;
    s->off += n;
}

/* Buffer at least n bytes at pos.  TRC_OK; TRC_ERR_EOF if the input ends
 * first (whatever it had is buffered); TRC_ERR_IO; TRC_ERR_NOMEM. */
static trc_status need(trcf_scanner *s, size_t n)
{
    if (avail(s) >= n)
        return TRC_OK;
    if (s->eof)
        return TRC_ERR_EOF;
    if (s->cap - s->pos < n) {
        size_t have = avail(s);
        if (n > s->cap) {
            size_t cap = s->cap ? s->cap : SCAN_BLOCK;
            uint8_t *b;
            while (cap < n)
                cap *= 2;
            b = trc_malloc(cap);
            if (!b)
                return TRC_ERR_NOMEM;
            if (have)
                memcpy(b, s->buf + s->pos, have);
            trc_free(s->buf);
            s->buf = b;
            s->cap = cap;
        } else if (have) {
            memmove(s->buf, s->buf + s->pos, have);
        }
        s->pos = 0;
        s->fill = have;
    }
    while (avail(s) < n) {
        long r = s->fn(s->ctx, s->buf + s->fill, s->cap - s->fill);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            s->err_no = errno;
            return TRC_ERR_IO;
        }
        if (r == 0) {
            s->eof = 1;
            return TRC_ERR_EOF;
        }
        s->fill += (size_t)r;
    }
    return TRC_OK;
}

/* Does a verified header start at buf[at]?  (40 bytes must be there.) */
static int header_at(const trcf_scanner *s, size_t at)
{
    trcf_chunk_header h;
    const char *why;
    return trcf_header_decode(s->buf + at, &h, &why) == TRC_OK;
}

/* Skip from pos (+skip_first) to the next verified header or the end of
 * input; describe the skipped region as damage in *ci. */
static trc_status resync(trcf_scanner *s, trcf_chunk_info *ci, size_t skip_first,
                         const char *why)
{
    uint64_t start = s->off;
    trc_status st;

    consume(s, skip_first < avail(s) ? skip_first : avail(s));
    for (;;) {
        uint8_t *q = avail(s) ? memchr(s->buf + s->pos, TRCF_MAGIC0, avail(s)) : NULL;
        if (!q) {
            consume(s, avail(s));
            st = need(s, 1);
            if (st == TRC_ERR_EOF)
                break;
            if (st != TRC_OK)
                return st;
            continue;
        }
        consume(s, (size_t)(q - (s->buf + s->pos)));
        st = need(s, TRCF_HEADER_SIZE);
        if (st == TRC_ERR_EOF) {
            consume(s, avail(s));   /* a partial candidate: damaged too */
            break;
        }
        if (st != TRC_OK)
            return st;
        if (header_at(s, s->pos))
            break;
        consume(s, 1);
    }
    ci->state = TRCF_CHUNK_DAMAGED;
    ci->offset = start;
    ci->length = s->off - start;
    ci->why = why;
    return TRC_OK;
}

/* The input ended before a whole chunk at pos.  If a verified header
 * follows inside what is left, this chunk was cut short by another
 * (damage); otherwise the input is truncated here. */
static trc_status cut_short(trcf_scanner *s, trcf_chunk_info *ci, const char *why)
{
    uint64_t start = s->off;
    size_t i;

    for (i = s->pos + 1; i + TRCF_HEADER_SIZE <= s->fill; i++) {
        if (s->buf[i] == TRCF_MAGIC0 && header_at(s, i)) {
            consume(s, i - s->pos);
            ci->state = TRCF_CHUNK_DAMAGED;
            ci->offset = start;
            ci->length = s->off - start;
            ci->why = "chunk cut short by the next chunk";
            return TRC_OK;
        }
    }
    consume(s, avail(s));
    ci->state = TRCF_CHUNK_TRUNCATED;
    ci->offset = start;
    ci->length = s->off - start;
    ci->why = why;
    return TRC_OK;
}

/* The first four bytes must be the magic ([R-READ-1]: an empty input
 * is not a .trc file either).  A shorter input that is a prefix of the
 * magic is a trace cut inside its first header: trcf_chunk_next reports
 * it as truncated (spec §8.1). */
static trc_status check_start(trcf_scanner *s, trcf_chunk_info *ci)
{
    trc_status st = need(s, 4);

    s->started = 1;
    if (st != TRC_OK && st != TRC_ERR_EOF)
        return st;
    if (avail(s) == 0) {
        ci->why = "empty input";
        return TRC_ERR_NOT_TRC;
    }
    if (avail(s) < 4 ? memcmp(s->buf + s->pos, TRCF_MAGIC, avail(s)) != 0
                     : !trcf_is_magic(s->buf + s->pos)) {
        ci->why = "does not start with a .trc chunk header";
        return TRC_ERR_NOT_TRC;
    }
    return TRC_OK;
}

trc_status trcf_chunk_next(trcf_scanner *s, trcf_chunk_info *ci)
{
    trc_status st;
    const char *why = NULL;
    size_t total;

    memset(ci, 0, sizeof *ci);
    if (!s->started) {
        st = check_start(s, ci);
        if (st != TRC_OK)
            return st;
    }
    ci->offset = s->off;
    st = need(s, TRCF_HEADER_SIZE);
    if (st == TRC_ERR_EOF) {
        if (avail(s) == 0)
            return TRC_ERR_EOF;
        if (memcmp(s->buf + s->pos, TRCF_MAGIC, avail(s) < 4 ? avail(s) : 4) == 0)
            return cut_short(s, ci, "input ends inside a chunk header");
        return resync(s, ci, 0, "garbage at end of input");
    }
    if (st != TRC_OK)
        return st;

    st = trcf_header_decode(s->buf + s->pos, &ci->h, &why);
    if (st != TRC_OK)
        return resync(s, ci, 1, why);
    ci->have_header = 1;
    total = TRCF_HEADER_SIZE + (size_t)ci->h.stored_len;
    if (ci->h.major != TRC_FORMAT_MAJOR) {
        /* Another major version: its lengths may mean something else, so
         * only step over the header and let the caller decide. */
        consume(s, TRCF_HEADER_SIZE);
        ci->state = TRCF_CHUNK_SKIPPED;
        ci->length = TRCF_HEADER_SIZE;
        ci->why = "unsupported major version";
        return TRC_OK;
    }
    st = need(s, total);
    if (st == TRC_ERR_EOF)
        return cut_short(s, ci, "input ends inside a chunk");
    if (st != TRC_OK)
        return st;

    if (ci->h.kind != TRCF_KIND_SEGMENT && ci->h.kind != TRCF_KIND_DATA)
        ci->why = "unknown chunk kind";
    else if (ci->h.flags & TRCF_FLAGS_RESERVED)
        ci->why = "reserved chunk flag set";
    if (ci->why) {
        /* Framed and verifiable even though we cannot read it. */
        const uint8_t *stored = s->buf + s->pos + TRCF_HEADER_SIZE;
        if (trcf_crc32(0, stored, ci->h.stored_len) != ci->h.payload_crc)
            return resync(s, ci, 1, "bad payload CRC");
        consume(s, total);
        ci->state = TRCF_CHUNK_SKIPPED;
        ci->length = total;
        return TRC_OK;
    }

    st = trcf_payload_decode(&s->inf, &ci->h, s->buf + s->pos + TRCF_HEADER_SIZE,
                             &ci->payload, &why);
    if (st == TRC_ERR_CORRUPT) {
        ci->payload = NULL;
        /* Rescan inside the payload too: a chunk cut short and followed
         * by another (cat of a truncated file) must not swallow it. */
        return resync(s, ci, 1, why);
    }
    if (st != TRC_OK)
        return st;
    consume(s, total);
    ci->state = TRCF_CHUNK_OK;
    ci->length = total;
    return TRC_OK;
}
