/*
 * tests/fuzz/fuzz_reader.c — libFuzzer harness (`make fuzz`, mk/fuzz.mk):
 * every input is read the ways the tools read it — the raw chunk listing
 * of trc-dump (format/scan.c, format/records.c), the public reader with
 * trc-dump --check and --events, and the reader feeding the chrome,
 * speedscope, collapsed and stats exporters — so the sanitizers see the
 * codec, the reader's model and the exporters on hostile bytes.
 * A custom mutator alternates libFuzzer's byte mutations with the
 * format-aware ones of tests/support/fuzz_mutate.c, which fix lengths
 * and CRCs so mutants get past the chunk checks to the record decoders.
 * Output goes to /dev/null; a crash, leak, sanitizer report or
 * allocation over 64 MiB (trc_alloc_largest) is a finding.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "trc/trc.h"
#include "format/alloc.h"
#include "lib/dump/dump.h"
#include "lib/export/chrome.h"
#include "lib/export/export.h"
#include "lib/export/speedscope.h"
#include "tests/support/fuzz_mutate.h"

#define MAX_EVENTS 1000000u

typedef struct src {
    const uint8_t *p;
    size_t len, pos;
} src;

static long mem_read(void *ctx, void *buf, size_t len)
{
    src *s = ctx;
    size_t n = s->len - s->pos < len ? s->len - s->pos : len;
    for (size_t i = 0; i < n; i++)
        ((uint8_t *)buf)[i] = s->p[s->pos + i];
    s->pos += n;
    return (long)n;
}

static trc_reader *open_mem(src *s, const uint8_t *data, size_t size)
{
    trc_status st;
    s->p = data;
    s->len = size;
    s->pos = 0;
    return trc_reader_open_callback(mem_read, s, "fuzz.trc", &st);
}

static void export_all(const uint8_t *data, size_t size, FILE *out)
{
    src s;
    trc_reader *r = open_mem(&s, data, size);
    chrome *c = chrome_new(NULL);
    sscope *sc = sscope_new(NULL);
    exp_collapsed *col = exp_collapsed_new(NULL);
    exp_stats *stats = exp_stats_new();
    const trc_event *ev;
    unsigned n = 0;
    int cok = 1, sok = 1;

    if (!r || !c || !sc || !col || !stats)
        goto out;
    while (trc_reader_next(r, &ev) == TRC_OK && n++ < MAX_EVENTS) {
        if (cok && chrome_event(c, r, ev, out) != TRC_OK)
            cok = 0;
        if (sok && sscope_event(sc, r, ev) != TRC_OK)
            sok = 0;
        if (ev->type == TRC_EV_SAMPLE) {
            exp_collapsed_add(col, r, &ev->u.sample);
            exp_stats_add(stats, r, &ev->u.sample);
        }
    }
    if (cok)
        chrome_finish(c, r, out);
    if (sok)
        sscope_finish(sc, r, out);
    exp_collapsed_write(col, r, out);
    if (exp_stats_finish(stats, r) == TRC_OK)
        exp_pstats_write(stats, out);
out:
    exp_stats_free(stats);
    exp_collapsed_free(col);
    sscope_free(sc);
    chrome_free(c);
    trc_reader_free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
    size_t n;
    uint8_t *m;
    if (seed % 3 == 0)
        return LLVMFuzzerMutate(data, size, max_size);
    m = fm_mutate(data, size, seed, 1 + (int)(seed % 5 == 0), &n, NULL);
    if (!m || n > max_size) {
        free(m);
        return LLVMFuzzerMutate(data, size, max_size);
    }
    for (size_t i = 0; i < n; i++)
        data[i] = m[i];
    free(m);
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *out;
    dump_opts o = {"fuzz.trc", NULL, NULL, 1};
    src s;
    trc_reader *r;

    if (!out)
        out = fopen("/dev/null", "w");
    if (!out)
        abort();
    trc_alloc_fail_after(-1);

    s.p = data;
    s.len = size;
    s.pos = 0;
    dump_listing(mem_read, &s, out, &o);

    if ((r = open_mem(&s, data, size)) != NULL) {
        dump_check(r, out, &o);
        trc_reader_free(r);
    }
    if ((r = open_mem(&s, data, size)) != NULL) {
        dump_events(r, out, &o);
        trc_reader_free(r);
    }
    export_all(data, size, out);
    if (trc_alloc_largest() > ((size_t)64 << 20))
        abort();   /* one allocation over 64 MiB from a hostile length */
    return 0;
}
