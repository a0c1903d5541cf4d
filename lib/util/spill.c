/*
 * lib/util/spill.c — records moved to an anonymous temporary file and read
 * back by offset (contract in spill.h).
 *
 * C requires a seek between a write and a following read on one stream,
 * and the other way round; an append right after an append needs none,
 * so consecutive appends (the common case: a converter spilling block
 * after block) are buffered by stdio instead of each costing a seek.
 */
#include "lib/util/spill.h"

#include <errno.h>

static long fail_after = -1; /* operations left before failures start; -1: never */
static long op_count;        /* operations since the hook was last set */

/* 1 when the test hook says this operation fails (errno set). */
static int injected(void)
{
    op_count++;
    if (fail_after < 0)
        return 0;
    if (fail_after > 0)
        fail_after--;
    if (fail_after > 0)
        return 0;
    errno = EIO;
    return 1;
}

void trcu_spill_fail_after(long n)
{
    fail_after = n < 0 ? -1 : n ? n : 1;
    op_count = 0;
}

long trcu_spill_count(void) { return op_count; }

/* Bytes of n records of size, or -1 when that does not fit in the file's
 * offsets from off on. */
static int64_t span(int64_t off, size_t n, size_t size)
{
    if (off < 0 || (size && n > (uint64_t)(INT64_MAX - off) / size))
        return -1;
    return (int64_t)(n * size);
}

/* Put the stream at off, ready for an operation of kind op. */
static int seek_to(trcu_spill *sp, int64_t off, int op)
{
    if (sp->last == op && sp->pos == off)
        return 0;
    sp->last = 0; /* a failed seek leaves the position unknown */
    if (fseeko(sp->f, off, SEEK_SET) != 0)
        return -1;
    sp->pos = off;
    return 0;
}

trc_status trcu_spill_write_at(trcu_spill *sp, int64_t off, const void *recs, size_t n,
                               size_t size)
{
    int64_t bytes = span(off, n, size);

    if (bytes < 0) {
        errno = EFBIG;
        return TRC_ERR_IO;
    }
    if (!sp->f) {
        if (injected() || !(sp->f = tmpfile()))
            return TRC_ERR_IO;
        sp->end = sp->pos = 0;
        sp->last = 0;
    }
    if (injected() || seek_to(sp, off, 'w') != 0)
        return TRC_ERR_IO;
    if (fwrite(recs, size, n, sp->f) != n) {
        sp->last = 0;
        return TRC_ERR_IO;
    }
    sp->last = 'w';
    sp->pos = off + bytes;
    if (sp->pos > sp->end)
        sp->end = sp->pos;
    return TRC_OK;
}

trc_status trcu_spill_append(trcu_spill *sp, const void *recs, size_t n, size_t size, int64_t *off)
{
    int64_t at = sp->end;
    trc_status st = trcu_spill_write_at(sp, at, recs, n, size);

    if (st == TRC_OK)
        *off = at;
    return st;
}

trc_status trcu_spill_read(trcu_spill *sp, int64_t off, void *recs, size_t n, size_t size)
{
    int64_t bytes = span(off, n, size);

    if (!sp->f || bytes < 0 || off + bytes > sp->end) {
        errno = sp->f ? EINVAL : EBADF;
        return TRC_ERR_IO;
    }
    if (injected() || seek_to(sp, off, 'r') != 0)
        return TRC_ERR_IO;
    if (fread(recs, size, n, sp->f) != n) {
        sp->last = 0;
        return TRC_ERR_IO;
    }
    sp->last = 'r';
    sp->pos = off + bytes;
    return TRC_OK;
}

trc_status trcu_spill_flush(trcu_spill *sp)
{
    if (!sp->f)
        return TRC_OK;
    if (injected() || fflush(sp->f) != 0)
        return TRC_ERR_IO;
    return TRC_OK;
}

void trcu_spill_close(trcu_spill *sp)
{
    if (sp->f)
        fclose(sp->f);
    *sp = (trcu_spill){0};
}
