/*
 * format/record.c — record framing (spec/DESIGN-NOTES.md "Payload"; see
 * format/record.h).
 */
#include "format/record.h"

#include <string.h>

#include "format/varint.h"

trc_status trcf_record_next_slow(trcf_rec_iter *it, trcf_record *rec, const char **why)
{
    uint64_t tag = 0, len = 0;
    int n;

    rec->offset = (size_t)(it->p - it->base);
    rec->body = NULL;
    rec->len = 0;
    if (it->p >= it->end)
        return TRC_ERR_EOF;
    n = trcf_uv_decode(it->p, it->end, &tag);
    if (n <= 0)
        goto bad;
    it->p += n;
    n = trcf_uv_decode(it->p, it->end, &len);
    if (n <= 0)
        goto bad;
    it->p += n;
    rec->type = tag >> 1;
    rec->must_understand = (int)(tag & 1);
    if (len > (uint64_t)(it->end - it->p)) {
        *why = "record length runs past the end of the chunk";
        it->p = it->end;
        return TRC_ERR_CORRUPT;
    }
    rec->body = it->p;
    rec->len = (size_t)len;
    it->p += len;
    return TRC_OK;
bad:
    *why = n < 0 ? "overlong varint in record header" : "record header runs past the end of the chunk";
    it->p = it->end;
    return TRC_ERR_CORRUPT;
}

size_t trcf_rec_begin(trcf_buf *b, uint64_t type, int must_understand, size_t body_max)
{
    uint8_t *p;

    if (body_max > SIZE_MAX - 2 * TRCF_UV_MAX || trcf_buf_reserve(b, body_max + 2 * TRCF_UV_MAX) != TRC_OK)
        return (size_t)-1;
    p = trcf_put_uv(b->data + b->len, type << 1 | (must_understand ? 1u : 0u));
    *p++ = 0;
    b->len = (size_t)(p - b->data);
    return b->len;
}

trc_status trcf_rec_end(trcf_buf *b, size_t body_start)
{
    size_t len = b->len - body_start;
    size_t extra;
    trc_status st;

    if (len < 0x80) {
        b->data[body_start - 1] = (uint8_t)len;
        return TRC_OK;
    }
    extra = trcf_uv_size(len) - 1;
    st = trcf_buf_reserve(b, extra);
    if (st != TRC_OK)
        return st;
    memmove(b->data + body_start + extra, b->data + body_start, len);
    trcf_put_uv(b->data + body_start - 1, len);
    b->len += extra;
    return TRC_OK;
}
