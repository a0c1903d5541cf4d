/*
 * test_json_out.c — the streaming JSON emitter (lib/export/common/json_out.c):
 * string escaping and UTF-8 handling checked against exact expected text
 * and against cJSON as an independent parser; integer, fixed-point and
 * double formatting.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "lib/export/common/json_out.h"

/* Run the emitter into a string; caller frees. */

static char *capture_str(const char *s, size_t n)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    jsonw w;
    assert_non_null(f);
    assert_int_equal(jsonw_open(&w, f), 0);
    jsonw_strn(&w, s, n);
    jsonw_close(&w);
    assert_int_equal(fclose(f), 0);
    return buf;
}

static void expect_str(const char *in, size_t n, const char *want)
{
    char *got = capture_str(in, n);
    assert_string_equal(got, want);
    free(got);
}

static void test_escapes(void **state)
{
    expect_str("plain", 5, "\"plain\"");
    expect_str("", 0, "\"\"");
    expect_str("a\"b\\c", 5, "\"a\\\"b\\\\c\"");
    expect_str("\n\r\t\b\f", 5, "\"\\n\\r\\t\\b\\f\"");
    expect_str("\x01\x1f\x7f", 3, "\"\\u0001\\u001f\x7f\"");
    expect_str("a\0b", 3, "\"a\\u0000b\"");
    expect_str("/", 1, "\"/\""); /* no needless escape */
}

static void test_utf8_valid_passthrough(void **state)
{
    /* 2-, 3- and 4-byte forms and the edges of the valid ranges. */
    const char *ok[] = {"gr\xc3\xb6\xc3\x9f\x65", "\xce\xbb", "\xe2\x82\xac",
                        "\xf0\x9f\x94\xa5", "\xc2\x80", "\xdf\xbf", "\xe0\xa0\x80",
                        "\xed\x9f\xbf", "\xee\x80\x80", "\xef\xbf\xbf", "\xf0\x90\x80\x80",
                        "\xf4\x8f\xbf\xbf"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        char want[32];
        snprintf(want, sizeof want, "\"%s\"", ok[i]);
        expect_str(ok[i], strlen(ok[i]), want);
    }
}

static void test_utf8_invalid_replaced(void **state)
{
    /* Each byte that does not start a well-formed sequence -> U+FFFD. */
    expect_str("\x80", 1, "\"\\ufffd\"");                 /* lone continuation */
    expect_str("\xc0\xaf", 2, "\"\\ufffd\\ufffd\"");      /* overlong '/' */
    expect_str("\xc1\xbf", 2, "\"\\ufffd\\ufffd\"");
    expect_str("\xe0\x80\xaf", 3, "\"\\ufffd\\ufffd\\ufffd\""); /* overlong 3-byte */
    expect_str("\xed\xa0\x80", 3, "\"\\ufffd\\ufffd\\ufffd\""); /* surrogate D800 */
    expect_str("\xf4\x90\x80\x80", 4, "\"\\ufffd\\ufffd\\ufffd\\ufffd\""); /* > U+10FFFF */
    expect_str("\xf5\x80", 2, "\"\\ufffd\\ufffd\"");
    expect_str("\xff", 1, "\"\\ufffd\"");
    expect_str("a\xe2\x82", 3, "\"a\\ufffd\\ufffd\"");     /* truncated at the end */
    expect_str("\xe2\x82" "b", 3, "\"\\ufffd\\ufffdb\"");  /* truncated mid-string */
    expect_str("\xc3\xb6\xc3", 3, "\"\xc3\xb6\\ufffd\"");
}

/* Whatever bytes go in, cJSON parses the output, and for valid UTF-8
 * without NUL it gives back the same bytes. */
static void test_cjson_roundtrip(void **state)
{
    unsigned char bytes[64];
    uint64_t seed = 7;
    for (int round = 0; round < 2000; round++) {
        size_t n = (size_t)(round % 40);
        for (size_t i = 0; i < n; i++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            bytes[i] = (unsigned char)(seed >> 56);
        }
        char *out = capture_str((const char *)bytes, n);
        cJSON *j = cJSON_Parse(out);
        assert_non_null(j);
        assert_true(cJSON_IsString(j));
        free(out);
        cJSON_Delete(j);
    }
    const char *s = "MainThread \xce\xb4 \"q\" \\ \t end \xf0\x9f\x94\xa5";
    char *out = capture_str(s, strlen(s));
    cJSON *j = cJSON_Parse(out);
    assert_non_null(j);
    assert_string_equal(cJSON_GetStringValue(j), s);
    cJSON_Delete(j);
    free(out);
}

/* The in-memory escaper gives the same bytes as the stream one, within
 * its documented bound of 6 bytes per input byte. */
static void test_escape_in_memory(void **state)
{
    unsigned char bytes[48];
    char mem[6 * 48 + 1];
    uint64_t seed = 99;
    for (int round = 0; round < 1000; round++) {
        size_t n = (size_t)(round % 48);
        for (size_t i = 0; i < n; i++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            bytes[i] = (unsigned char)(seed >> 56);
        }
        char *streamed = capture_str((const char *)bytes, n);
        size_t len = jsonw_escape(mem, (const char *)bytes, n);
        assert_true(len <= 6 * n);
        mem[len] = 0;
        assert_int_equal(strlen(streamed), len + 2);
        assert_memory_equal(streamed + 1, mem, len);
        free(streamed);
    }
    char d[24];
    d[jsonw_fmt_i64(d, -1234567)] = 0;
    assert_string_equal(d, "-1234567");
    d[jsonw_fmt_i64(d, INT64_MIN)] = 0;
    assert_string_equal(d, "-9223372036854775808");
    d[jsonw_fmt_i64(d, 0)] = 0;
    assert_string_equal(d, "0");
}

static char *capture_num(int kind, int64_t i, uint64_t u, double d)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    jsonw w;
    assert_non_null(f);
    assert_int_equal(jsonw_open(&w, f), 0);
    if (kind == 0)
        jsonw_i64(&w, i);
    else if (kind == 1)
        jsonw_u64(&w, u);
    else if (kind == 2)
        jsonw_us3(&w, i);
    else
        jsonw_double(&w, d);
    jsonw_close(&w);
    assert_int_equal(fclose(f), 0);
    return buf;
}

#define EXPECT_NUM(kind, i, u, d, want)                     \
    do {                                                    \
        char *got_ = capture_num(kind, i, u, d);            \
        assert_string_equal(got_, want);                    \
        free(got_);                                         \
    } while (0)

static void test_integers(void **state)
{
    EXPECT_NUM(0, 0, 0, 0, "0");
    EXPECT_NUM(0, -1, 0, 0, "-1");
    EXPECT_NUM(0, INT64_MIN, 0, 0, "-9223372036854775808");
    EXPECT_NUM(0, INT64_MAX, 0, 0, "9223372036854775807");
    EXPECT_NUM(1, 0, UINT64_MAX, 0, "18446744073709551615");
    EXPECT_NUM(1, 0, 1000, 0, "1000");
    /* The digit count and the digits at every length boundary, in place
     * (jsonw_put_*) as in the stream, against printf. */
    uint64_t p10 = 1;
    for (int k = 0; k < 20; k++, p10 *= 10) {
        uint64_t vs[3] = {p10 - 1, p10, p10 + 1};
        for (int j = 0; j < 3; j++) {
            char want[32], got[32];
            snprintf(want, sizeof want, "%llu", (unsigned long long)vs[j]);
            *jsonw_put_u64(got, vs[j]) = 0;
            assert_string_equal(got, want);
            snprintf(want, sizeof want, "%lld", -(long long)(vs[j] >> 1));
            *jsonw_put_i64(got, -(int64_t)(vs[j] >> 1)) = 0;
            assert_string_equal(got, want);
        }
    }
}

static void test_us3(void **state)
{
    EXPECT_NUM(2, 0, 0, 0, "0.000");
    EXPECT_NUM(2, 1, 0, 0, "0.001");
    EXPECT_NUM(2, 999, 0, 0, "0.999");
    EXPECT_NUM(2, 1000, 0, 0, "1.000");
    EXPECT_NUM(2, 1234567, 0, 0, "1234.567");
    EXPECT_NUM(2, -1500, 0, 0, "-1.500");
    EXPECT_NUM(2, -1, 0, 0, "-0.001");
    EXPECT_NUM(2, INT64_MIN, 0, 0, "-9223372036854775.808");
}

static void test_double(void **state)
{
    EXPECT_NUM(3, 0, 0, 0.0, "0");
    EXPECT_NUM(3, 0, 0, 60.5e6, "60500000");
    EXPECT_NUM(3, 0, 0, 0.1, "0.1");
    EXPECT_NUM(3, 0, 0, -2.5, "-2.5");
    EXPECT_NUM(3, 0, 0, 1.0 / 0.0, "null");
    EXPECT_NUM(3, 0, 0, 0.0 / 0.0, "null");
    /* Values needing 17 digits still round-trip. */
    double hard[] = {0.1 + 0.2, 1e300, 5e-324, 2.0030000000000001, 123456.789};
    for (size_t k = 0; k < sizeof hard / sizeof hard[0]; k++) {
        char *got = capture_num(3, 0, 0, hard[k]);
        assert_true(strtod(got, NULL) == hard[k]);
        cJSON *j = cJSON_Parse(got);
        assert_non_null(j);
        assert_true(cJSON_GetNumberValue(j) == hard[k]);
        cJSON_Delete(j);
        free(got);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escapes),
        cmocka_unit_test(test_utf8_valid_passthrough),
        cmocka_unit_test(test_utf8_invalid_replaced),
        cmocka_unit_test(test_cjson_roundtrip),
        cmocka_unit_test(test_escape_in_memory),
        cmocka_unit_test(test_integers),
        cmocka_unit_test(test_us3),
        cmocka_unit_test(test_double),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
