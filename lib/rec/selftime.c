/*
 * selftime.c — what the recorder's own sampling costs (TREC_SELF_TIMING,
 * reported by bench/trec.sh): the thread CPU time of each tick divided by
 * the samples it took, kept as a histogram of 50 ns buckets up to 200 us
 * (beyond that only the maximum), so quantiles cost no per-tick memory.
 */
#include "lib/rec/rec_int.h"

#include "lib/util/alloc.h"

#include <string.h>
#include <time.h>

#define BUCKET_NS 50
#define BUCKETS 4000

int rec_selftime_init(rec_selftime *st)
{
    memset(st, 0, sizeof *st);
    st->hist = trc_calloc(BUCKETS, sizeof *st->hist);
    return st->hist ? 0 : -1;
}

void rec_selftime_cleanup(rec_selftime *st)
{
    trc_free(st->hist);
    memset(st, 0, sizeof *st);
}

int64_t rec_thread_cpu_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return 0;
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void rec_selftime_add(rec_selftime *st, int64_t per_sample_ns)
{
    if (!st->hist)
        return;
    st->n++;
    if (per_sample_ns > st->max_ns)
        st->max_ns = per_sample_ns;
    int64_t b = per_sample_ns / BUCKET_NS;
    if (b >= 0 && b < BUCKETS)
        st->hist[b]++;
}

int64_t rec_selftime_quantile(const rec_selftime *st, double q)
{
    if (!st->hist || st->n == 0)
        return 0;
    uint64_t want = (uint64_t)(q * (double)st->n + 0.5), seen = 0;
    for (int b = 0; b < BUCKETS; b++) {
        seen += st->hist[b];
        if (seen >= want && seen > 0)
            return (int64_t)(b + 1) * BUCKET_NS;
    }
    return st->max_ns;
}
