/*
 * format/buf.c — growable byte buffer (see format/buf.h).
 */
#include "format/buf.h"

#include <string.h>

#include "lib/util/alloc.h"
#include "lib/util/grow.h"

trc_status trcf_buf_grow(trcf_buf *b, size_t extra)
{
    if (extra > SIZE_MAX - b->len)
        return TRC_ERR_LIMIT;
    size_t need = b->len + extra;
    if (need <= b->cap)
        return TRC_OK;
    /* A buffer of need bytes is one whose last byte, need - 1, may be
     * written: lib/util's grow with one-byte rows. */
    return trcu_grow((void **)&b->data, &b->cap, need - 1, 1);
}

trc_status trcf_buf_append(trcf_buf *b, const void *p, size_t n)
{
    trc_status st = trcf_buf_reserve(b, n);
    if (st != TRC_OK)
        return st;
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    return TRC_OK;
}

void trcf_buf_free(trcf_buf *b)
{
    trc_free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}
