/*
 * losses.c — counting what the recorder could not record and writing it
 * as LOSS records (spec record 18, kinds TRC_LOSS_SAMPLES_*).
 *
 * A loss record per dropped sample would cost more than the samples, so
 * counts accumulate with the time range they cover and are written in
 * batches (the session flushes about once a second and at the end).
 */
#include "lib/rec/rec_int.h"

#include <string.h>

void rec_loss_init(rec_lossacc *a, trc_loss_kind kind, int64_t pid)
{
    memset(a, 0, sizeof *a);
    a->kind = kind;
    a->pid = pid;
}

void rec_loss_add(rec_lossacc *a, uint64_t n, int64_t now_ns)
{
    if (n == 0)
        return;
    if (a->count == 0)
        a->first_ns = now_ns;
    a->last_ns = now_ns;
    a->count += n;
    a->total += n;
}

trc_status rec_loss_flush(rec_lossacc *a, trc_writer *w, const char *detail)
{
    if (a->count == 0 || !w)
        return TRC_OK;
    trc_loss l;
    memset(&l, 0, sizeof l);
    l.kind = a->kind;
    l.count = a->count;
    l.pid = a->pid;
    l.thread = 0;
    l.start_ns = a->first_ns;
    l.end_ns = a->last_ns;
    l.detail = detail ? detail : "";
    trc_status st = trc_writer_loss(w, &l);
    if (st == TRC_OK)
        a->count = 0;
    return st;
}
