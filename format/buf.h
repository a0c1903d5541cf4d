/*
 * format/buf.h — a growable byte buffer for building payloads and chunks.
 *
 * Ownership: a trcf_buf owns its data; zero-initialise it (or use
 * TRCF_BUF_INIT) and release with trcf_buf_free.  Growth goes through
 * trc_realloc so allocation-failure tests reach it.  Writers reserve the
 * worst-case size of a record once, then use the unchecked trcf_put_*
 * helpers of format/varint.h on buf->data + buf->len.
 */
#ifndef TRC_FORMAT_BUF_H
#define TRC_FORMAT_BUF_H

#include <stddef.h>
#include <stdint.h>

#include "trc/trc.h"

typedef struct trcf_buf {
    uint8_t *data;
    size_t len, cap;
} trcf_buf;

#define TRCF_BUF_INIT { NULL, 0, 0 }

/* Make room for `extra` more bytes after len.  TRC_ERR_NOMEM on failure
 * (buffer unchanged), TRC_ERR_LIMIT if len + extra overflows. */
trc_status trcf_buf_grow(trcf_buf *b, size_t extra);

static inline trc_status trcf_buf_reserve(trcf_buf *b, size_t extra)
{
    if (b->cap - b->len >= extra)
        return TRC_OK;
    return trcf_buf_grow(b, extra);
}

/* Append bytes (reserving as needed). */
trc_status trcf_buf_append(trcf_buf *b, const void *p, size_t n);

void trcf_buf_free(trcf_buf *b);

#endif /* TRC_FORMAT_BUF_H */
