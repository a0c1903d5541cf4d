/*
 * format/record.h — record framing inside a decoded chunk payload
 * (spec/DESIGN-NOTES.md "Payload"): `tag uv, len uv, body[len]`, with
 * type = tag >> 1 and tag & 1 = MUST UNDERSTAND.
 *
 * Reading: trcf_rec_iter walks a payload; each trcf_record_next gives the
 * type, the must-understand bit, the body (borrowed from the payload) and
 * the record's offset inside the payload.  Framing errors (a varint that
 * runs off the end, a length past the end) are corrupt and end the walk:
 * the rest of the payload cannot be framed.
 *
 * Writing: trcf_rec_begin writes the tag and a one-byte length
 * placeholder; the caller appends the body; trcf_rec_end patches the
 * length, moving the body when it needs a longer varint (bodies of 128+
 * bytes: strings and headers, never samples).
 */
#ifndef TRC_FORMAT_RECORD_H
#define TRC_FORMAT_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "trc/trc.h"
#include "format/buf.h"

typedef struct trcf_record {
    uint64_t type;            /* tag >> 1 */
    int must_understand;      /* tag & 1 */
    const uint8_t *body;      /* borrowed from the payload */
    size_t len;
    size_t offset;            /* of the tag, from the payload start */
} trcf_record;

typedef struct trcf_rec_iter {
    const uint8_t *base, *p, *end;
} trcf_rec_iter;

static inline void trcf_rec_iter_init(trcf_rec_iter *it, const uint8_t *payload, size_t len)
{
    it->base = it->p = payload;
    it->end = payload + len;
}

/* Next record.  TRC_OK; TRC_ERR_EOF when the payload is used up exactly;
 * TRC_ERR_CORRUPT when the framing is broken (*why set; the iterator
 * then stays at the end).  rec->offset is valid in every case.
 * One-byte tag and length (nearly every record) are handled inline. */
trc_status trcf_record_next_slow(trcf_rec_iter *it, trcf_record *rec, const char **why);

static inline trc_status trcf_record_next(trcf_rec_iter *it, trcf_record *rec, const char **why)
{
    const uint8_t *p = it->p;

    if (it->end - p >= 2 && p[0] < 0x80 && p[1] < 0x80 && (size_t)(it->end - p - 2) >= p[1]) {
        rec->offset = (size_t)(p - it->base);
        rec->type = p[0] >> 1;
        rec->must_understand = p[0] & 1;
        rec->body = p + 2;
        rec->len = p[1];
        it->p = p + 2 + p[1];
        return TRC_OK;
    }
    return trcf_record_next_slow(it, rec, why);
}

/* Start a record of `type` in b: reserves body_max + 12 bytes, writes the
 * tag and the length placeholder; returns the body's start offset in b
 * (or (size_t)-1 on allocation failure).  The caller may then write up to
 * body_max bytes at b->data + b->len (advancing b->len). */
size_t trcf_rec_begin(trcf_buf *b, uint64_t type, int must_understand, size_t body_max);

/* Finish the record whose body started at body_start.  TRC_OK or
 * TRC_ERR_NOMEM (only for bodies of 128+ bytes, which need room). */
trc_status trcf_rec_end(trcf_buf *b, size_t body_start);

#endif /* TRC_FORMAT_RECORD_H */
