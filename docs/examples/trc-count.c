/*
 * trc-count.c — a complete third-party converter against the public API
 * only (trc/trc.h): counts samples per thread and prints on-CPU seconds.
 *
 *   cc trc-count.c $(pkg-config --cflags --libs trc) -o trc-count
 *   ./trc-count run.trc
 */
#include <stdio.h>
#include <stdlib.h>
#include <trc/trc.h>

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: trc-count FILE.trc\n");
        return 2;
    }
    trc_status st;
    trc_reader *r = trc_reader_open_path(argv[1], &st);
    if (!r) {
        fprintf(stderr, "trc-count: %s: %s\n", argv[1], trc_status_str(st));
        return 2;
    }
    /* reader-global thread ids are dense from 1, so an array indexed by id works */
    size_t cap = 0;
    double *on_cpu = NULL;
    unsigned long long losses = 0;
    const trc_event *ev;
    while ((st = trc_reader_next(r, &ev)) == TRC_OK) {
        if (ev->type == TRC_EV_LOSS) {
            losses++;
        } else if (ev->type == TRC_EV_SAMPLE && (ev->u.sample.flags & TRC_SAMPLE_ON_CPU)) {
            uint32_t t = ev->u.sample.thread;
            if (t >= cap) {
                size_t ncap = (t + 1) * 2;
                double *v = realloc(on_cpu, ncap * sizeof *v);
                if (!v)
                    return 2;
                for (size_t i = cap; i < ncap; i++)
                    v[i] = 0;
                on_cpu = v;
                cap = ncap;
            }
            on_cpu[t] += (double)ev->u.sample.count * (double)ev->u.sample.weight_ns / 1e9;
        }
    }
    int rc = st == TRC_ERR_EOF ? 0 : 2;
    if (rc)
        fprintf(stderr, "trc-count: %s\n", trc_reader_error(r));
    for (uint32_t t = 1; t < cap; t++) {
        const trc_thread *th = trc_reader_thread(r, t);
        if (th && on_cpu[t] > 0)
            printf("%-20s tid %-8lld %8.3f s on CPU\n", th->name, (long long)th->tid, on_cpu[t]);
    }
    if (losses)
        printf("(%llu loss records: see trc-dump --check)\n", losses);
    free(on_cpu);
    trc_reader_free(r);
    return rc;
}
