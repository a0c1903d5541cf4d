/*
 * test_chunk.c — chunk framing (spec §4, §8.1, §8.4-8.6): header
 * encode/decode and its checks, payload CRC and inflate checks, and the
 * scanner's verdicts: not a trace, truncation, damage with resync, chunks
 * it skips, pipe-sized reads, and limits enforced before allocating.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/util/alloc.h"
#include "format/chunk.h"
#include "format/crc32.h"
#include "format/limits.h"
#include "format/scan.h"
#include "format/varint.h"
#include "tests/support/trace_builder.h"

static void test_crc_check_value(void **state)
{
    (void)state;
    assert_true(trcf_crc32(0, "123456789", 9) == 0xCBF43926u);
    assert_true(trcf_crc32(0, "", 0) == 0);
    /* incremental == one shot */
    assert_true(trcf_crc32(trcf_crc32(0, "1234", 4), "56789", 5) == 0xCBF43926u);
}

static void header(trcf_chunk_header *h, uint8_t kind, uint32_t stored, uint32_t decoded, uint8_t flags)
{
    memset(h, 0, sizeof *h);
    h->major = 1;
    h->kind = kind;
    h->flags = flags;
    h->stored_len = stored;
    h->decoded_len = decoded;
    h->seq = 0x0102030405060708ull;
    h->base_time = -5;
    h->payload_crc = 0xdeadbeef;
}

static void test_header_roundtrip(void **state)
{
    trcf_chunk_header h, back;
    uint8_t b[TRCF_HEADER_SIZE];
    const char *why = NULL;
    (void)state;
    header(&h, 2, 10, 10, 0);
    trcf_header_encode(&h, b);
    assert_memory_equal(b, "\x89TRC\x01\x00\x02\x00\x0a\x00\x00\x00\x0a\x00\x00\x00", 16);
    assert_int_equal(trcf_header_decode(b, &back, &why), TRC_OK);
    assert_int_equal(back.seq, h.seq);
    assert_true(back.base_time == -5);
    assert_true(back.payload_crc == 0xdeadbeef);
    assert_true(back.header_crc == trcf_crc32(0, b, 36));
}

static void test_header_every_bit_flip(void **state)
{
    trcf_chunk_header h, back;
    uint8_t b[TRCF_HEADER_SIZE];
    const char *why;
    int byte, bit;
    (void)state;
    header(&h, 2, 10, 10, 0);
    for (byte = 0; byte < TRCF_HEADER_SIZE; byte++) {
        for (bit = 0; bit < 8; bit++) {
            trcf_header_encode(&h, b);
            b[byte] ^= (uint8_t)(1u << bit);
            why = NULL;
            assert_int_not_equal(trcf_header_decode(b, &back, &why), TRC_OK);
            assert_non_null(why);
        }
    }
}

static void test_header_limits(void **state)
{
    trcf_chunk_header h, back;
    uint8_t b[TRCF_HEADER_SIZE];
    const char *why;
    (void)state;
    header(&h, 2, TRC_MAX_CHUNK, TRC_MAX_CHUNK, 0);
    trcf_header_encode(&h, b);
    assert_int_equal(trcf_header_decode(b, &back, &why), TRC_OK);
    header(&h, 2, TRC_MAX_CHUNK + 1, TRC_MAX_CHUNK + 1, 0);
    trcf_header_encode(&h, b);
    assert_int_equal(trcf_header_decode(b, &back, &why), TRC_ERR_LIMIT);
    header(&h, 2, TRC_MAX_STORED + 1, 100, TRCF_FLAG_DEFLATE);
    trcf_header_encode(&h, b);
    assert_int_equal(trcf_header_decode(b, &back, &why), TRC_ERR_LIMIT);
    header(&h, 2, 0xffffffffu, 0xffffffffu, 0);
    trcf_header_encode(&h, b);
    assert_int_equal(trcf_header_decode(b, &back, &why), TRC_ERR_LIMIT);
    /* stored != decoded without compression */
    header(&h, 2, 10, 11, 0);
    trcf_header_encode(&h, b);
    assert_int_equal(trcf_header_decode(b, &back, &why), TRC_ERR_LIMIT);
    /* 16 MiB from 10 stored bytes is beyond deflate's ratio */
    header(&h, 2, 10, TRC_MAX_CHUNK, TRCF_FLAG_DEFLATE);
    trcf_header_encode(&h, b);
    assert_int_equal(trcf_header_decode(b, &back, &why), TRC_ERR_LIMIT);
    /* another major: its lengths are not interpreted */
    header(&h, 2, 0xffffffffu, 1, 0);
    h.major = 2;
    trcf_header_encode(&h, b);
    assert_int_equal(trcf_header_decode(b, &back, &why), TRC_OK);
    assert_int_equal(back.major, 2);
}

static void test_build_and_decode(void **state)
{
    uint8_t payload[4000];
    trcf_deflater d = { 0 };
    trcf_inflater z = { 0 };
    trcf_chunk_header h, back;
    const uint8_t *out;
    const char *why;
    int level;
    size_t i;
    (void)state;
    for (i = 0; i < sizeof payload; i++)
        payload[i] = (uint8_t)(i % 7);
    for (level = 0; level <= 9; level++) {
        memset(&h, 0, sizeof h);
        h.major = 1;
        h.kind = 2;
        assert_int_equal(trcf_chunk_build(&d, level, &h, payload, sizeof payload), TRC_OK);
        assert_int_equal(!!(h.flags & TRCF_FLAG_DEFLATE), level > 0);
        assert_int_equal(d.out.len, TRCF_HEADER_SIZE + h.stored_len);
        assert_int_equal(trcf_header_decode(d.out.data, &back, &why), TRC_OK);
        assert_int_equal(trcf_payload_decode(&z, &back, d.out.data + TRCF_HEADER_SIZE, &out, &why), TRC_OK);
        assert_memory_equal(out, payload, sizeof payload);
    }
    /* incompressible: stored even at level 9 */
    for (i = 0; i < sizeof payload; i++)
        payload[i] = (uint8_t)(((i * 2654435761u) >> 13) ^ (i * 97));
    assert_int_equal(trcf_chunk_build(&d, 9, &h, payload, 64), TRC_OK);
    assert_int_equal(h.flags, 0);
    assert_int_equal(h.stored_len, 64);
    /* empty payload */
    assert_int_equal(trcf_chunk_build(&d, 6, &h, payload, 0), TRC_OK);
    assert_int_equal(h.stored_len, 0);
    trcf_deflater_cleanup(&d);
    trcf_inflater_cleanup(&z);
}

static void test_payload_damage(void **state)
{
    uint8_t payload[1000], stored[2000];
    trcf_deflater d = { 0 };
    trcf_inflater z = { 0 };
    trcf_chunk_header h, bad;
    const uint8_t *out;
    const char *why;
    size_t i;
    (void)state;
    for (i = 0; i < sizeof payload; i++)
        payload[i] = (uint8_t)(i % 13);
    memset(&h, 0, sizeof h);
    h.major = 1;
    h.kind = 2;
    assert_int_equal(trcf_chunk_build(&d, 6, &h, payload, sizeof payload), TRC_OK);
    memcpy(stored, d.out.data + TRCF_HEADER_SIZE, h.stored_len);
    /* a flipped payload byte fails the CRC before inflating */
    stored[3] ^= 0x10;
    assert_int_equal(trcf_payload_decode(&z, &h, stored, &out, &why), TRC_ERR_CORRUPT);
    assert_string_equal(why, "bad payload CRC");
    stored[3] ^= 0x10;
    /* header claims one byte more (CRC made to match): decoded length mismatch */
    bad = h;
    bad.decoded_len++;
    assert_int_equal(trcf_payload_decode(&z, &bad, stored, &out, &why), TRC_ERR_CORRUPT);
    bad.decoded_len -= 2;
    assert_int_equal(trcf_payload_decode(&z, &bad, stored, &out, &why), TRC_ERR_CORRUPT);
    /* junk after the end of the deflate stream */
    stored[h.stored_len] = 0x55;
    bad = h;
    bad.stored_len++;
    bad.payload_crc = trcf_crc32(0, stored, bad.stored_len);
    assert_int_equal(trcf_payload_decode(&z, &bad, stored, &out, &why), TRC_ERR_CORRUPT);
    /* garbage that is not deflate at all */
    memset(stored, 0xff, 32);
    bad = h;
    bad.stored_len = 32;
    bad.payload_crc = trcf_crc32(0, stored, 32);
    assert_int_equal(trcf_payload_decode(&z, &bad, stored, &out, &why), TRC_ERR_CORRUPT);
    /* and the good one still decodes with the same inflater */
    memcpy(stored, d.out.data + TRCF_HEADER_SIZE, h.stored_len);
    assert_int_equal(trcf_payload_decode(&z, &h, stored, &out, &why), TRC_OK);
    assert_memory_equal(out, payload, sizeof payload);
    trcf_deflater_cleanup(&d);
    trcf_inflater_cleanup(&z);
}

/* ---- scanner ---- */

typedef struct scan_out {
    trc_status first;
    int n_ok, n_skip, n_damaged, n_trunc;
    uint64_t dmg_off[8], dmg_len[8], trunc_off;
    trc_status end;
} scan_out;

static void scan(const uint8_t *p, size_t len, size_t max_read, scan_out *o)
{
    tb_src src = { p, len, 0, max_read };
    trcf_scanner *s = trcf_scanner_new(tb_read, &src, NULL);
    trcf_chunk_info ci;
    trc_status st;
    int guard = 0;

    memset(o, 0, sizeof *o);
    assert_non_null(s);
    o->first = TRC_OK;
    while ((st = trcf_chunk_next(s, &ci)) == TRC_OK) {
        assert_true(++guard < 100000);
        switch (ci.state) {
        case TRCF_CHUNK_OK:
            o->n_ok++;
            assert_non_null(ci.payload);
            break;
        case TRCF_CHUNK_SKIPPED:
            o->n_skip++;
            break;
        case TRCF_CHUNK_DAMAGED:
            if (o->n_damaged < 8) {
                o->dmg_off[o->n_damaged] = ci.offset;
                o->dmg_len[o->n_damaged] = ci.length;
            }
            o->n_damaged++;
            assert_non_null(ci.why);
            break;
        case TRCF_CHUNK_TRUNCATED:
            o->n_trunc++;
            o->trunc_off = ci.offset;
            break;
        }
    }
    o->end = st;
    if (st == TRC_ERR_NOT_TRC)
        o->first = st;
    assert_int_equal(trcf_scanner_offset(s), st == TRC_ERR_NOT_TRC ? 0 : len);
    trcf_scanner_free(s);
}

static void three_chunks(tb_buf *b)
{
    uint8_t pl[300];
    size_t i;
    for (i = 0; i < sizeof pl; i++)
        pl[i] = (uint8_t)(i * 7);
    tb_chunk(b, 1, 0, 1, 0, 0, 0, pl, 100, 0);
    tb_chunk(b, 1, 0, 2, 0, 1, 0, pl, 300, 6);
    tb_chunk(b, 1, 0, 2, 0, 2, 0, pl, 50, 0);
}

static void test_scan_not_trc(void **state)
{
    scan_out o;
    (void)state;
    scan((const uint8_t *)"", 0, 0, &o);
    assert_int_equal(o.end, TRC_ERR_NOT_TRC);
    scan((const uint8_t *)"\x89TX", 3, 0, &o);       /* shorter than the magic, not a prefix */
    assert_int_equal(o.end, TRC_ERR_NOT_TRC);
    scan((const uint8_t *)"\x89TR", 3, 0, &o);       /* a prefix: truncated ([R-READ-1]) */
    assert_int_equal(o.end, TRC_ERR_EOF);
    assert_int_equal(o.n_trunc, 1);
    assert_int_equal(o.trunc_off, 0);
    scan((const uint8_t *)"hello world, not a trace at all.........", 40, 0, &o);
    assert_int_equal(o.end, TRC_ERR_NOT_TRC);
    scan((const uint8_t *)"\x89PNG\r\n\x1a\n", 8, 0, &o);
    assert_int_equal(o.end, TRC_ERR_NOT_TRC);
}

static void test_scan_good_any_read_size(void **state)
{
    tb_buf b = { 0 };
    scan_out o;
    size_t sizes[] = { 0, 1, 2, 39, 40, 41, 1000 }, i;
    (void)state;
    three_chunks(&b);
    for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        scan(b.p, b.len, sizes[i], &o);
        assert_int_equal(o.end, TRC_ERR_EOF);
        assert_int_equal(o.n_ok, 3);
        assert_int_equal(o.n_damaged + o.n_trunc + o.n_skip, 0);
    }
    tb_buf_free(&b);
}

static void test_scan_truncation_every_offset(void **state)
{
    tb_buf b = { 0 };
    uint64_t off[8], end[8];
    size_t n, cut, k;
    scan_out o;
    (void)state;
    three_chunks(&b);
    n = tb_chunks(b.p, b.len, off, end, 8);
    assert_int_equal(n, 3);
    for (cut = 0; cut <= b.len; cut++) {
        size_t whole = 0;
        int at_boundary = cut == 0;
        for (k = 0; k < n; k++) {
            whole += end[k] <= cut;
            at_boundary |= end[k] == cut;
        }
        scan(b.p, cut, 0, &o);
        if (cut == 0) {
            assert_int_equal(o.end, TRC_ERR_NOT_TRC);
            continue;
        }
        assert_int_equal(o.end, TRC_ERR_EOF);
        assert_int_equal(o.n_ok, (int)whole);
        assert_int_equal(o.n_damaged, 0);
        assert_int_equal(o.n_trunc, at_boundary ? 0 : 1);
        if (!at_boundary)
            assert_int_equal(o.trunc_off, off[whole]);
    }
    tb_buf_free(&b);
}

static void test_scan_damage_and_resync(void **state)
{
    tb_buf b = { 0 };
    uint64_t off[8], end[8];
    size_t i, k;
    scan_out o;
    (void)state;
    three_chunks(&b);
    tb_chunks(b.p, b.len, off, end, 8);
    /* every byte of the middle chunk, flipped: one damaged region exactly
     * covering it, then the third chunk is found again */
    for (i = off[1]; i < end[1]; i++) {
        b.p[i] ^= 0x01;
        scan(b.p, b.len, 0, &o);
        assert_int_equal(o.end, TRC_ERR_EOF);
        assert_int_equal(o.n_damaged, 1);
        assert_int_equal(o.dmg_off[0], off[1]);
        assert_int_equal(o.dmg_len[0], end[1] - off[1]);
        assert_int_equal(o.n_ok, 2);
        b.p[i] ^= 0x01;
    }
    /* garbage between chunks and at the end */
    {
        tb_buf g = { 0 };
        tb_append(&g, b.p, end[0]);
        tb_append(&g, "garbage\x89TRC junk", 17);
        tb_append(&g, b.p + off[1], b.len - off[1]);
        tb_append(&g, "tail", 4);
        scan(g.p, g.len, 3, &o);
        assert_int_equal(o.n_ok, 3);
        assert_int_equal(o.n_damaged, 2);
        assert_int_equal(o.dmg_off[0], end[0]);
        assert_int_equal(o.dmg_len[0], 17);
        assert_int_equal(o.dmg_off[1], g.len - 4);
        tb_buf_free(&g);
    }
    /* a cut chunk followed by a whole trace (cat cut.trc good.trc) */
    for (k = off[1] + 1; k < end[1]; k += 7) {
        tb_buf g = { 0 };
        tb_append(&g, b.p, k);
        tb_append(&g, b.p, b.len);
        scan(g.p, g.len, 0, &o);
        assert_int_equal(o.n_ok, 4);
        assert_int_equal(o.n_damaged, 1);
        assert_int_equal(o.dmg_off[0], off[1]);
        assert_int_equal(o.dmg_len[0], k - off[1]);
        tb_buf_free(&g);
    }
    tb_buf_free(&b);
}

static void test_scan_skips(void **state)
{
    tb_buf b = { 0 };
    uint8_t pl[10] = { 0 };
    scan_out o;
    (void)state;
    tb_chunk(&b, 1, 0, 1, 0, 0, 0, pl, 10, 0);
    tb_chunk(&b, 1, 0, 7, 0, 1, 0, pl, 10, 0);        /* reserved kind */
    tb_chunk(&b, 1, 0, 2, 0x40, 2, 0, pl, 10, 0);     /* reserved flag */
    tb_chunk(&b, 1, 3, 2, 0, 3, 0, pl, 10, 0);        /* newer minor: read */
    tb_chunk(&b, 2, 0, 2, 0, 4, 0, pl, 10, 0);        /* newer major: skipped header */
    scan(b.p, b.len, 0, &o);
    assert_int_equal(o.n_ok, 2);
    assert_int_equal(o.n_skip, 3);
    /* the major-2 chunk's payload is not interpreted: after its header the
     * scanner resyncs over 10 bytes of damage */
    assert_int_equal(o.n_damaged, 1);
    tb_buf_free(&b);
}

static void test_scan_limits_before_alloc(void **state)
{
    /* A verified header declaring 16 MiB + 1 decoded: refused as damage
     * without any allocation near that size. */
    trcf_chunk_header h;
    uint8_t b[TRCF_HEADER_SIZE + 64];
    scan_out o;
    (void)state;
    memset(b, 0, sizeof b);
    header(&h, 2, TRC_MAX_CHUNK + 1, TRC_MAX_CHUNK + 1, 0);
    h.seq = 0;
    trcf_header_encode(&h, b);
    trc_alloc_fail_after(-1);
    scan(b, sizeof b, 0, &o);
    assert_int_equal(o.n_damaged, 1);
    assert_true(trc_alloc_largest() <= 2u << 20);
    /* a valid 16 MiB chunk is accepted (allocation of its size is fine) */
}

static void test_scan_big_chunk(void **state)
{
    size_t n = TRC_MAX_CHUNK;
    uint8_t *pl = calloc(1, n);
    tb_buf b = { 0 };
    scan_out o;
    (void)state;
    assert_non_null(pl);
    tb_chunk(&b, 1, 0, 1, 0, 0, 0, pl, n, 0);
    tb_chunk(&b, 1, 0, 2, 0, 1, 0, pl, n, 1);
    scan(b.p, b.len, 0, &o);
    assert_int_equal(o.n_ok, 2);
    assert_int_equal(o.end, TRC_ERR_EOF);
    free(pl);
    tb_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crc_check_value),
        cmocka_unit_test(test_header_roundtrip),
        cmocka_unit_test(test_header_every_bit_flip),
        cmocka_unit_test(test_header_limits),
        cmocka_unit_test(test_build_and_decode),
        cmocka_unit_test(test_payload_damage),
        cmocka_unit_test(test_scan_not_trc),
        cmocka_unit_test(test_scan_good_any_read_size),
        cmocka_unit_test(test_scan_truncation_every_offset),
        cmocka_unit_test(test_scan_damage_and_resync),
        cmocka_unit_test(test_scan_skips),
        cmocka_unit_test(test_scan_limits_before_alloc),
        cmocka_unit_test(test_scan_big_chunk),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
