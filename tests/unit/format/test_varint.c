/*
 * test_varint.c — primitive encodings (spec §2.2-2.6): uv/sv edge
 * cases, overlong and truncated varints, the decoding cursor's sticky
 * errors, strings (limit, NUL), and the time cursor's wrap-around.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "format/limits.h"
#include "format/varint.h"

static size_t enc(uint64_t v, uint8_t *out)
{
    return (size_t)(trcf_put_uv(out, v) - out);
}

static void test_uv_spec_table(void **state)
{
    /* The table of spec §2.2 */
    static const struct { uint64_t v; const char *hex; size_t n; } t[] = {
        { 0, "\x00", 1 }, { 1, "\x01", 1 }, { 127, "\x7f", 1 }, { 128, "\x80\x01", 2 },
        { 300, "\xac\x02", 2 }, { 16384, "\x80\x80\x01", 3 },
        { UINT64_MAX, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 10 },
    };
    uint8_t buf[16];
    size_t i;
    (void)state;
    for (i = 0; i < sizeof t / sizeof t[0]; i++) {
        uint64_t back = 12345;
        assert_int_equal(enc(t[i].v, buf), t[i].n);
        assert_memory_equal(buf, t[i].hex, t[i].n);
        assert_int_equal(trcf_uv_size(t[i].v), t[i].n);
        assert_int_equal(trcf_uv_decode(buf, buf + t[i].n, &back), (int)t[i].n);
        assert_true(back == t[i].v);
    }
}

static void test_uv_all_widths_roundtrip(void **state)
{
    uint8_t buf[16];
    int bit;
    (void)state;
    for (bit = 0; bit < 64; bit++) {
        uint64_t vals[3] = { (uint64_t)1 << bit, ((uint64_t)1 << bit) - 1, ((uint64_t)1 << bit) + 1 };
        int k;
        for (k = 0; k < 3; k++) {
            uint64_t back;
            trcf_cur c;
            size_t n = enc(vals[k], buf);
            assert_int_equal(trcf_uv_decode(buf, buf + n, &back), (int)n);
            assert_true(back == vals[k]);
            trcf_cur_init(&c, buf, n);
            assert_true(trcf_cur_uv(&c) == vals[k]);
            assert_true(trcf_cur_ok(&c));
            assert_ptr_equal(c.p, buf + n);
        }
    }
}

static void test_uv_overlong(void **state)
{
    /* 10th byte 0x02: value would need 65 bits */
    const uint8_t ten2[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02 };
    /* 11 bytes: never terminates within 10 */
    const uint8_t eleven[] = { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00 };
    /* longer than needed but legal ([R-ENC-2]): 0 as 80 00, 1 as 81 80 00 */
    const uint8_t zero2[] = { 0x80, 0x00 };
    const uint8_t one3[] = { 0x81, 0x80, 0x00 };
    uint64_t v = 99;
    trcf_cur c;
    (void)state;
    assert_int_equal(trcf_uv_decode(ten2, ten2 + sizeof ten2, &v), -1);
    assert_int_equal(trcf_uv_decode(eleven, eleven + sizeof eleven, &v), -1);
    assert_int_equal(trcf_uv_decode(zero2, zero2 + 2, &v), 2);
    assert_true(v == 0);
    assert_int_equal(trcf_uv_decode(one3, one3 + 3, &v), 3);
    assert_true(v == 1);
    trcf_cur_init(&c, ten2, sizeof ten2);
    assert_true(trcf_cur_uv(&c) == 0);
    assert_int_equal(c.err, TRC_ERR_CORRUPT);
    assert_string_equal(c.why, "overlong varint");
}

static void test_uv_truncated(void **state)
{
    uint8_t buf[16];
    size_t n = enc(UINT64_MAX, buf), k;
    uint64_t v;
    (void)state;
    for (k = 0; k < n; k++) {
        trcf_cur c;
        assert_int_equal(trcf_uv_decode(buf, buf + k, &v), 0);
        trcf_cur_init(&c, buf, k);
        (void)trcf_cur_uv(&c);
        assert_int_equal(c.err, TRC_ERR_CORRUPT);
        assert_string_equal(c.why, "record body too short");
    }
}

static void test_sv_zigzag(void **state)
{
    /* The examples of spec §2.3 */
    static const struct { int64_t v; uint64_t z; } t[] = {
        { 0, 0 }, { -1, 1 }, { 1, 2 }, { -2, 3 }, { 63, 126 }, { -64, 127 }, { 64, 128 },
        { INT64_MAX, UINT64_MAX - 1 }, { INT64_MIN, UINT64_MAX },
    };
    uint8_t buf[16], ex[] = { 0xab, 0x02 };
    size_t i;
    trcf_cur c;
    (void)state;
    for (i = 0; i < sizeof t / sizeof t[0]; i++) {
        size_t n;
        assert_true(trcf_zigzag(t[i].v) == t[i].z);
        assert_true(trcf_unzigzag(t[i].z) == t[i].v);
        n = (size_t)(trcf_put_sv(buf, t[i].v) - buf);
        trcf_cur_init(&c, buf, n);
        assert_true(trcf_cur_sv(&c) == t[i].v);
        assert_true(trcf_cur_ok(&c));
    }
    assert_int_equal(trcf_put_sv(buf, -150) - buf, 2);
    assert_memory_equal(buf, ex, 2);
}

static void test_cursor_sticky(void **state)
{
    const uint8_t body[] = { 0x05, 0x80 };   /* one uv, then a cut varint */
    trcf_cur c;
    (void)state;
    trcf_cur_init(&c, body, sizeof body);
    assert_true(trcf_cur_uv(&c) == 5);
    assert_true(trcf_cur_uv(&c) == 0);
    assert_false(trcf_cur_ok(&c));
    /* later reads return 0 and keep the first reason */
    assert_true(trcf_cur_u8(&c) == 0);
    assert_true(trcf_cur_f64(&c) == 0.0);
    assert_null(trcf_cur_bytes(&c, 1));
    assert_string_equal(c.why, "record body too short");
}

static void test_fixed_and_f64(void **state)
{
    uint8_t buf[8];
    double vals[] = { 0.0, -0.0, 1.5, -1e300, 1.0 / 0.0 };
    size_t i;
    trcf_cur c;
    (void)state;
    trcf_put_u32le(buf, 0x11223344u);
    assert_int_equal(buf[0], 0x44);
    assert_int_equal(buf[3], 0x11);
    assert_true(trcf_get_u32le(buf) == 0x11223344u);
    trcf_put_u64le(buf, 0x0102030405060708ull);
    assert_int_equal(buf[0], 0x08);
    assert_true(trcf_get_u64le(buf) == 0x0102030405060708ull);
    for (i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        double back;
        trcf_put_f64(buf, vals[i]);
        trcf_cur_init(&c, buf, 8);
        back = trcf_cur_f64(&c);
        assert_memory_equal(&back, &vals[i], sizeof back);
    }
    trcf_cur_init(&c, buf, 7);
    (void)trcf_cur_f64(&c);
    assert_false(trcf_cur_ok(&c));
}

static void test_strings(void **state)
{
    uint8_t buf[32], *p;
    trcf_str s;
    trcf_cur c;
    const char utf8[] = "h\xc3\xa9llo \xf0\x9f\x90\x8d";   /* non-ASCII passes untouched */
    (void)state;
    p = trcf_put_uv(buf, sizeof utf8 - 1);
    memcpy(p, utf8, sizeof utf8 - 1);
    trcf_cur_init(&c, buf, (size_t)(p - buf) + sizeof utf8 - 1);
    trcf_cur_str(&c, &s);
    assert_true(trcf_cur_ok(&c));
    assert_int_equal(s.len, sizeof utf8 - 1);
    assert_memory_equal(s.p, utf8, s.len);

    /* empty string */
    buf[0] = 0;
    trcf_cur_init(&c, buf, 1);
    trcf_cur_str(&c, &s);
    assert_true(trcf_cur_ok(&c));
    assert_int_equal(s.len, 0);

    /* NUL inside: corrupt */
    memcpy(buf, "\x03" "a\0b", 4);
    trcf_cur_init(&c, buf, 4);
    trcf_cur_str(&c, &s);
    assert_int_equal(c.err, TRC_ERR_CORRUPT);

    /* declared longer than what is left: corrupt, not read */
    memcpy(buf, "\x05" "ab", 3);
    trcf_cur_init(&c, buf, 3);
    trcf_cur_str(&c, &s);
    assert_int_equal(c.err, TRC_ERR_CORRUPT);
    assert_int_equal(s.len, 0);

    /* over TRC_MAX_STRING: a limit error before looking at the bytes */
    p = trcf_put_uv(buf, (uint64_t)TRC_MAX_STRING + 1);
    trcf_cur_init(&c, buf, (size_t)(p - buf));
    trcf_cur_str(&c, &s);
    assert_int_equal(c.err, TRC_ERR_LIMIT);
}

static void test_time_cursor(void **state)
{
    /* times round-trip for every pair, including wrap-around deltas */
    int64_t times[] = { 0, 1, -1, INT64_MAX, INT64_MIN, 1000000000, 999999999, INT64_MIN + 1, 5 };
    uint8_t buf[256], *p = buf;
    int64_t wc = 42, rc = 42;
    size_t i;
    trcf_cur c;
    (void)state;
    for (i = 0; i < sizeof times / sizeof times[0]; i++)
        p = trcf_put_time(p, &wc, times[i]);
    trcf_cur_init(&c, buf, (size_t)(p - buf));
    for (i = 0; i < sizeof times / sizeof times[0]; i++)
        assert_true(trcf_cur_time(&c, &rc) == times[i]);
    assert_true(trcf_cur_ok(&c));
    assert_true(rc == times[sizeof times / sizeof times[0] - 1]);
    /* dur: end = start + d (mod 2^64), cursor unchanged */
    p = trcf_put_uv(buf, UINT64_MAX);
    trcf_cur_init(&c, buf, (size_t)(p - buf));
    assert_true(trcf_cur_dur(&c, 10) == 9);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_uv_spec_table),
        cmocka_unit_test(test_uv_all_widths_roundtrip),
        cmocka_unit_test(test_uv_overlong),
        cmocka_unit_test(test_uv_truncated),
        cmocka_unit_test(test_sv_zigzag),
        cmocka_unit_test(test_cursor_sticky),
        cmocka_unit_test(test_fixed_and_f64),
        cmocka_unit_test(test_strings),
        cmocka_unit_test(test_time_cursor),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
