/*
 * format/buf.c — growable byte buffer (see format/buf.h).
 */
#include "format/buf.h"

#include <string.h>

#include "lib/util/alloc.h"

/* Not lib/util's trcu_grow, on purpose: that one zeroes every new row,
 * and a byte buffer's new bytes are always written (by the caller, or by
 * inflate) before len covers them.  The chunk decoder reserves a whole
 * decoded payload at once (format/chunk.c), so zeroing would write bytes
 * that the inflate overwrites at once: measured, 1 % more instructions
 * for trc-dump --summary of a 200000-sample trace, and pages made
 * resident before they are needed.  It also sizes in bytes from
 * len + extra and reports an overflowing size as TRC_ERR_LIMIT (the
 * record is too big), not as out of memory. */
trc_status trcf_buf_grow(trcf_buf *b, size_t extra)
{
    size_t need, cap;
    uint8_t *p;

    if (extra > SIZE_MAX - b->len)
        return TRC_ERR_LIMIT;
    need = b->len + extra;
    if (need <= b->cap)
        return TRC_OK;
    cap = b->cap ? b->cap : 256;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    p = trc_realloc(b->data, cap);
    if (!p)
        return TRC_ERR_NOMEM;
    b->data = p;
    b->cap = cap;
    return TRC_OK;
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
