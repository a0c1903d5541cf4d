/*
 * test_reader_damage.c — the reader on damaged and combined inputs (spec
 * §8.4-8.8): truncation at every byte offset of a multi-chunk trace,
 * every byte of a chunk flipped, chunks removed or repeated, the SEGMENT
 * chunk lost, concatenated traces (ids merged), not-a-trace inputs,
 * random garbage, and mutated payloads behind valid CRCs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "trc/trc.h"
#include "format/chunk.h"
#include "format/scan.h"
#include "tests/support/trace_builder.h"

#define MAXC 512

typedef struct layout {
    tb_buf b;
    uint64_t off[MAXC], end[MAXC];
    size_t n;
    tb_result ref;
} layout;

static void make(layout *l, int samples, uint32_t chunk_bytes, int level)
{
    memset(l, 0, sizeof *l);
    assert_int_equal(tb_standard_trace(&l->b, samples, chunk_bytes, level), TRC_OK);
    l->n = tb_chunks(l->b.p, l->b.len, l->off, l->end, MAXC);
    assert_true(l->n > 5 && l->n < MAXC);
    assert_int_equal(tb_read_mem(l->b.p, l->b.len, 0, &l->ref), TRC_ERR_EOF);
    assert_int_equal(l->ref.losses, 0);
}

static void drop(layout *l)
{
    tb_result_free(&l->ref);
    tb_buf_free(&l->b);
}

static uint64_t end_of(const layout *l, uint64_t off)
{
    size_t i;
    for (i = 0; i < l->n; i++)
        if (l->off[i] == off)
            return l->end[i];
    fail_msg("no chunk at %llu", (unsigned long long)off);
    return 0;
}

/* Non-loss lines of res equal the reference's lines from chunks that
 * satisfy keep(off). */
static void expect_lines(const layout *l, const tb_result *res, int (*keep)(const layout *, uint64_t, void *),
                         void *arg)
{
    size_t i = 0, j = 0;
    for (;;) {
        while (i < l->ref.n && !keep(l, l->ref.offsets[i], arg))
            i++;
        while (j < res->n && strncmp(res->lines[j], "LOSS", 4) == 0 && strstr(res->lines[j], "reader=1"))
            j++;
        if (i >= l->ref.n || j >= res->n)
            break;
        assert_string_equal(res->lines[j], l->ref.lines[i]);
        i++;
        j++;
    }
    assert_true(i >= l->ref.n);
    assert_true(j >= res->n);
}

static int before_cut(const layout *l, uint64_t off, void *arg)
{
    return end_of(l, off) <= *(size_t *)arg;
}

static void test_truncation_every_offset(void **state)
{
    layout l;
    size_t cut, k;
    (void)state;
    make(&l, 400, 300, 6);
    for (cut = 0; cut <= l.b.len; cut++) {
        tb_result res;
        int boundary = 0;
        uint64_t cut_chunk = 0;
        for (k = 0; k < l.n; k++) {
            boundary |= l.end[k] == cut;
            if (l.off[k] < cut && cut < l.end[k])
                cut_chunk = l.off[k];
        }
        tb_read_mem(l.b.p, cut, cut % 3 == 0 ? 7 : 0, &res);
        if (cut == 0) {
            assert_int_equal(res.status, TRC_ERR_NOT_TRC);
            assert_non_null(strstr(res.error, "not a .trc file"));
            tb_result_free(&res);
            continue;
        }
        if (cut < 4) {
            /* a prefix of the magic: a trace cut in its first header ([R-READ-1]) */
            assert_int_equal(res.status, TRC_ERR_EOF);
            assert_int_equal(res.n, 1);
            assert_int_equal(res.loss_count[TRC_LOSS_TRUNCATED], 1);
            tb_result_free(&res);
            continue;
        }
        assert_int_equal(res.status, TRC_ERR_EOF);
        expect_lines(&l, &res, before_cut, &cut);
        if (boundary) {
            assert_int_equal(res.losses, 0);
        } else {
            char want[64];
            assert_int_equal(res.losses, 1);
            assert_int_equal(res.loss_count[TRC_LOSS_TRUNCATED], 1);
            snprintf(want, sizeof want, "offset=%llu ", (unsigned long long)cut_chunk);
            assert_non_null(strstr(res.lines[res.n - 1], want));
            snprintf(want, sizeof want, "offset 0x%llx:", (unsigned long long)cut_chunk);
            assert_non_null(strstr(res.error, want));
        }
        tb_result_free(&res);
    }
    drop(&l);
}

static int not_chunk(const layout *l, uint64_t off, void *arg)
{
    (void)l;
    return off != *(uint64_t *)arg;
}

static void test_flipped_bytes(void **state)
{
    layout l;
    size_t victim, i;
    (void)state;
    make(&l, 400, 300, 6);
    victim = l.n / 2;
    /* every byte of a middle chunk, header and payload */
    for (i = l.off[victim]; i < l.end[victim]; i++) {
        tb_result res;
        char want[64];
        l.b.p[i] ^= 0x04;
        tb_read_mem(l.b.p, l.b.len, 0, &res);
        assert_int_equal(res.status, TRC_ERR_EOF);
        assert_int_equal(res.losses, 1);
        assert_int_equal(res.loss_count[TRC_LOSS_CHUNK_DAMAGED], 1);
        assert_int_equal(res.stats.damaged_chunks, 1);
        snprintf(want, sizeof want, "offset 0x%llx: ", (unsigned long long)l.off[victim]);
        assert_non_null(strstr(res.error, want));
        assert_true(strstr(res.error, "CRC") || strstr(res.error, "magic") || strstr(res.error, "length"));
        expect_lines(&l, &res, not_chunk, &l.off[victim]);
        tb_result_free(&res);
        l.b.p[i] ^= 0x04;
    }
    /* the first chunk damaged: definitions lost, so later references are
     * undefined: reported once per chunk, never one per record */
    {
        tb_result res;
        l.b.p[l.off[0] + 50] ^= 0xff;
        tb_read_mem(l.b.p, l.b.len, 0, &res);
        assert_int_equal(res.status, TRC_ERR_EOF);
        assert_int_equal(res.loss_count[TRC_LOSS_CHUNK_DAMAGED], 1);
        assert_true(res.loss_count[TRC_LOSS_UNDEFINED_REF] > 0);
        assert_true(res.losses <= 1 + l.n);
        assert_int_equal(res.loss_count[TRC_LOSS_CHUNK_MISSING], 0);
        l.b.p[l.off[0] + 50] ^= 0xff;
        tb_result_free(&res);
    }
    drop(&l);
}

static void test_missing_and_repeated_chunks(void **state)
{
    layout l;
    tb_buf g = { 0 };
    tb_result res;
    size_t v;
    (void)state;
    make(&l, 400, 300, 6);
    v = l.n / 2;
    /* two chunks removed */
    tb_append(&g, l.b.p, l.off[v]);
    tb_append(&g, l.b.p + l.end[v + 1], l.b.len - l.end[v + 1]);
    tb_read_mem(g.p, g.len, 0, &res);
    assert_int_equal(res.status, TRC_ERR_EOF);
    assert_int_equal(res.losses, 1);
    assert_int_equal(res.loss_count[TRC_LOSS_CHUNK_MISSING], 2);
    assert_non_null(strstr(res.error, "2 chunks missing"));
    tb_result_free(&res);
    g.len = 0;

    /* the SEGMENT chunk removed: references are undefined (one loss per
     * chunk that had any), and the sequence says chunk 0 is missing */
    tb_append(&g, l.b.p + l.end[0], l.b.len - l.end[0]);
    tb_read_mem(g.p, g.len, 0, &res);
    assert_int_equal(res.status, TRC_ERR_EOF);
    assert_int_equal(res.loss_count[TRC_LOSS_CHUNK_MISSING], 1);
    assert_true(res.loss_count[TRC_LOSS_UNDEFINED_REF] > 0);
    assert_int_equal(res.samples, 0);
    tb_result_free(&res);
    g.len = 0;

    /* a chunk repeated out of order: reported, read without the segment's
     * definitions, and the sequence check goes on from it */
    tb_append(&g, l.b.p, l.end[v]);
    tb_append(&g, l.b.p + l.off[v - 2], l.end[v - 2] - l.off[v - 2]);
    tb_append(&g, l.b.p + l.end[v], l.b.len - l.end[v]);
    tb_read_mem(g.p, g.len, 0, &res);
    assert_int_equal(res.status, TRC_ERR_EOF);
    assert_non_null(strstr(res.lines[0], "SEGMENT"));
    {
        size_t i;
        int went_back = 0;
        for (i = 0; i < res.n; i++)
            went_back |= strstr(res.lines[i], "went back") != NULL;
        assert_true(went_back);
    }
    assert_int_equal(res.loss_count[TRC_LOSS_CHUNK_MISSING], (uint64_t)(v - (v - 2) - 1 + 1));
    tb_result_free(&res);
    tb_buf_free(&g);
    drop(&l);
}

/* A SEGMENT chunk numbered other than 0 ([R-CHUNK-4]): reported once,
 * read as chunk 0, so the DATA chunks after it (1, 2, ...) are neither
 * "repeated" nor missing and keep its definitions: every sample read. */
static void test_segment_not_numbered_0(void **state)
{
    layout l;
    tb_result clean, res;
    trcf_chunk_header h;
    const char *why = NULL;
    (void)state;
    make(&l, 400, 300, 6);
    tb_read_mem(l.b.p, l.b.len, 0, &clean);
    assert_int_equal(clean.losses, 0);
    assert_int_equal(trcf_header_decode(l.b.p + l.off[0], &h, &why), TRC_OK);
    assert_int_equal(h.kind, TRCF_KIND_SEGMENT);
    h.seq = 7;
    trcf_header_encode(&h, l.b.p + l.off[0]);
    tb_read_mem(l.b.p, l.b.len, 0, &res);
    assert_int_equal(res.status, TRC_ERR_EOF);
    assert_int_equal(res.losses, 1);
    assert_int_equal(res.loss_count[TRC_LOSS_OTHER], 1);
    assert_int_equal(res.loss_count[TRC_LOSS_CHUNK_MISSING], 0);
    assert_int_equal(res.loss_count[TRC_LOSS_UNDEFINED_REF], 0);
    {
        size_t i;
        int said = 0;
        for (i = 0; i < res.n; i++)
            said |= strstr(res.lines[i], "SEGMENT chunk numbered 7, not 0") != NULL;
        assert_true(said);
    }
    assert_int_equal(res.samples, clean.samples);
    assert_int_equal(tb_result_events(&res), tb_result_events(&clean));
    tb_result_free(&res);
    tb_result_free(&clean);
    drop(&l);
}

static void test_concatenation(void **state)
{
    tb_buf a = { 0 }, b = { 0 }, ab = { 0 };
    tb_result ra, rb, rab, raa;
    trc_writer_options o;
    trc_writer *w;
    trc_status st;
    uint32_t th[2], fr[3], stk[3];
    size_t i;
    (void)state;
    assert_int_equal(tb_standard_trace(&a, 300, 400, 6), TRC_OK);
    /* b: another process; interns some of a's frames in another order,
     * plus new ones */
    memset(&o, 0, sizeof o);
    o.start_ns = 5;
    o.wall_ns = 5;
    o.host = "other";
    w = trc_writer_open_callback(tb_write, &b, &o, &st);
    assert_non_null(w);
    assert_int_equal(trc_writer_thread(w, 77, 78, "b-main", &th[0]), TRC_OK);
    assert_int_equal(trc_writer_thread(w, 77, 79, "b-2", &th[1]), TRC_OK);
    assert_int_equal(trc_writer_frame(w, TRC_FRAME_NATIVE, "new_native", "", 0, 0, &fr[2]), TRC_OK);
    assert_int_equal(trc_writer_frame(w, TRC_FRAME_PYTHON, "main", "app.py", 20, 18, &fr[1]), TRC_OK);
    assert_int_equal(trc_writer_frame(w, TRC_FRAME_PYTHON, "<module>", "app.py", 10, 1, &fr[0]), TRC_OK);
    assert_int_equal(trc_writer_stack(w, 0, fr[0], &stk[0]), TRC_OK);
    assert_int_equal(trc_writer_stack(w, stk[0], fr[1], &stk[1]), TRC_OK);
    assert_int_equal(trc_writer_stack(w, stk[1], fr[2], &stk[2]), TRC_OK);
    for (i = 0; i < 100; i++)
        assert_int_equal(trc_writer_sample(w, (int64_t)i * 1000, th[i % 2], stk[i % 3], 1, 0), TRC_OK);
    assert_int_equal(trc_writer_close(w, 200000), TRC_OK);

    tb_append(&ab, a.p, a.len);
    tb_append(&ab, b.p, b.len);
    tb_read_mem(a.p, a.len, 0, &ra);
    tb_read_mem(b.p, b.len, 0, &rb);
    tb_read_mem(ab.p, ab.len, 0, &rab);
    assert_int_equal(rab.status, TRC_ERR_EOF);
    assert_int_equal(rab.losses, 0);
    assert_int_equal(rab.n, ra.n + rb.n);
    for (i = 0; i < ra.n; i++)
        assert_string_equal(rab.lines[i], ra.lines[i]);
    for (i = 0; i < rb.n; i++)
        assert_string_equal(rab.lines[ra.n + i], rb.lines[i]);
    assert_int_equal(rab.stats.segments, 2);
    assert_int_equal(rab.threads, ra.threads + rb.threads);
    /* a has 6 stacks; b's first two are a's, its third is new */
    assert_int_equal(rab.stacks, 7);
    assert_int_equal(rab.frames, 7);

    /* the same file twice: one model, no duplicate definitions */
    ab.len = 0;
    tb_append(&ab, a.p, a.len);
    tb_append(&ab, a.p, a.len);
    tb_read_mem(ab.p, ab.len, 0, &raa);
    assert_int_equal(raa.status, TRC_ERR_EOF);
    assert_int_equal(raa.losses, 0);
    assert_int_equal(raa.threads, 3);
    assert_int_equal(raa.stacks, 6);
    assert_int_equal(raa.samples, 600);
    /* the second copy re-announces nothing that did not change: the only
     * THREAD event is the rename (back from "worker-1", then again) */
    {
        size_t threads = 0;
        for (i = 0; i < raa.n; i++)
            threads += strncmp(raa.lines[i], "THREAD", 6) == 0;
        assert_int_equal(threads, 4 + 2);
    }
    tb_result_free(&ra);
    tb_result_free(&rb);
    tb_result_free(&rab);
    tb_result_free(&raa);
    tb_buf_free(&a);
    tb_buf_free(&b);
    tb_buf_free(&ab);
}

static void test_not_trc(void **state)
{
    tb_result res;
    const char *inputs[] = { "", "\x89X", "\x89TX", "#!/bin/sh\necho hi\n", "\x1f\x8b\x08\x00gzip" };
    const char *prefixes[] = { "\x89", "\x89T", "\x89TR", "\x89TRC" };
    size_t i;
    (void)state;
    for (i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
        tb_read_mem((const uint8_t *)inputs[i], strlen(inputs[i]), 0, &res);
        assert_int_equal(res.status, TRC_ERR_NOT_TRC);
        assert_int_equal(res.n, 0);
        assert_non_null(strstr(res.error, "mem.trc: offset 0x0: not a .trc file"));
        tb_result_free(&res);
    }
    /* 1 to 4 bytes of the magic: a truncated trace, not a foreign file
     * ([R-READ-1], §8.4 case 2), as for any longer cut of a first header */
    for (i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
        tb_read_mem((const uint8_t *)prefixes[i], strlen(prefixes[i]), 0, &res);
        assert_int_equal(res.status, TRC_ERR_EOF);
        assert_int_equal(res.losses, 1);
        assert_int_equal(res.loss_count[TRC_LOSS_TRUNCATED], 1);
        tb_result_free(&res);
    }
    /* the magic then garbage: a damaged trace, not a foreign file */
    tb_read_mem((const uint8_t *)"\x89TRC and then nothing useful......................", 50, 0, &res);
    assert_int_equal(res.status, TRC_ERR_EOF);
    assert_int_equal(res.loss_count[TRC_LOSS_CHUNK_DAMAGED], 1);
    tb_result_free(&res);
}

static void test_garbage_everywhere(void **state)
{
    /* random bytes after a valid start: never a crash or a hang */
    layout l;
    uint64_t rng = 12345;
    int round;
    (void)state;
    make(&l, 400, 300, 6);
    for (round = 0; round < 300; round++) {
        tb_result res;
        size_t k, n = 1 + round % 20;
        uint8_t *copy = malloc(l.b.len);
        memcpy(copy, l.b.p, l.b.len);
        for (k = 0; k < n; k++) {
            rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
            copy[4 + (rng >> 33) % (l.b.len - 4)] = (uint8_t)(rng >> 17);
        }
        tb_read_mem(copy, l.b.len, round % 5, &res);
        assert_int_equal(res.status, TRC_ERR_EOF);
        tb_result_free(&res);
        free(copy);
    }
    drop(&l);
}

/* Hostile bytes behind valid CRCs: decoded payloads are mutated (bit
 * flips, overwrites, insertions, deletions) and wrapped in new chunks
 * whose CRCs check, so the record decoders see them.  Never a crash, a
 * hang, or a reading error: damage is only ever reported as losses. */
static void test_valid_crc_mutations(void **state)
{
    tb_buf b = { 0 };
    tb_src src;
    trcf_scanner *s;
    trcf_chunk_info ci;
    uint8_t *pl[64];
    size_t pn[64];
    trcf_chunk_header hd[64];
    uint64_t rng = 88172645463325252ULL;
    int n = 0, c, it;
    (void)state;
    assert_int_equal(tb_standard_trace(&b, 800, 500, 6), TRC_OK);
    memset(&src, 0, sizeof src);
    src.p = b.p;
    src.len = b.len;
    s = trcf_scanner_new(tb_read, &src, NULL);
    while (trcf_chunk_next(s, &ci) == TRC_OK && n < 64) {
        pl[n] = malloc(ci.h.decoded_len + 1);
        memcpy(pl[n], ci.payload, ci.h.decoded_len);
        pn[n] = ci.h.decoded_len;
        hd[n] = ci.h;
        n++;
    }
    trcf_scanner_free(s);
    assert_true(n > 5);
#define NEXT() (rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17, rng)
    for (it = 0; it < 400; it++) {
        tb_buf out = { 0 };
        tb_result res;
        for (c = 0; c < n; c++) {
            uint8_t *p = malloc(pn[c] + 64);
            size_t len = pn[c];
            uint64_t seq = hd[c].seq;
            memcpy(p, pl[c], len);
            if (NEXT() % 3 == 0) {
                int k = 1 + (int)(NEXT() % 6), j;
                for (j = 0; j < k && len > 1; j++) {
                    size_t at = NEXT() % len;
                    switch (NEXT() % 5) {
                    case 0: p[at] ^= (uint8_t)(1u << (NEXT() % 8)); break;
                    case 1: p[at] = (uint8_t)NEXT(); break;
                    case 2: memmove(p + at, p + at + 1, len - at - 1); len--; break;
                    case 3: memmove(p + at + 1, p + at, len - at); p[at] = (uint8_t)NEXT(); len++; break;
                    default: p[at] = 0xff; break;
                    }
                }
            }
            if (NEXT() % 50 == 0)
                seq += NEXT() % 3;
            tb_chunk(&out, 1, 0, hd[c].kind, 0, seq, hd[c].base_time, p, len, (int)(NEXT() % 2) * 6);
            free(p);
        }
        tb_read_mem(out.p, out.len, NEXT() % 4 == 0 ? 1 + NEXT() % 100 : 0, &res);
        assert_int_equal(res.status, TRC_ERR_EOF);
        tb_result_free(&res);
        tb_buf_free(&out);
    }
#undef NEXT
    for (c = 0; c < n; c++)
        free(pl[c]);
    tb_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_truncation_every_offset),
        cmocka_unit_test(test_flipped_bytes),
        cmocka_unit_test(test_missing_and_repeated_chunks),
        cmocka_unit_test(test_segment_not_numbered_0),
        cmocka_unit_test(test_concatenation),
        cmocka_unit_test(test_not_trc),
        cmocka_unit_test(test_garbage_everywhere),
        cmocka_unit_test(test_valid_crc_mutations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
