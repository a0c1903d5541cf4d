/*
 * test_py_text.c — lib/py/py_text.c: a str's characters read in each of
 * PEP 393's widths, and written as UTF-8 of 1 to 4 bytes; what UTF-8
 * cannot hold (a surrogate, a value past U+10FFFF) becomes U+FFFD, and a
 * character that does not fit is not written in part.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "lib/py/py_text.h"

#include <string.h>

static void test_widths(void **state)
{
    (void)state;
    const uint8_t one[] = {'a', 0xe9};
    assert_int_equal(py_ucs_at(one, 1, 1), 0xe9);
    uint16_t two[] = {0x20ac, 0x4e2d};
    assert_int_equal(py_ucs_at((const uint8_t *)two, 2, 1), 0x4e2d);
    uint32_t four[] = {0x1f600, 0x10ffff};
    assert_int_equal(py_ucs_at((const uint8_t *)four, 4, 0), 0x1f600);
    assert_int_equal(py_ucs_at((const uint8_t *)four, 4, 1), 0x10ffff);
}

static void expect(uint32_t cp, const char *want)
{
    char out[8] = {0};
    size_t n = py_utf8_put(out, sizeof out, cp);
    assert_int_equal(n, strlen(want));
    assert_memory_equal(out, want, n);
}

static void test_utf8(void **state)
{
    (void)state;
    expect('A', "A");
    expect(0xe9, "\xc3\xa9");
    expect(0x20ac, "\xe2\x82\xac");
    expect(0x1f600, "\xf0\x9f\x98\x80");
    expect(0xd800, "\xef\xbf\xbd");     /* a lone surrogate */
    expect(0x110000, "\xef\xbf\xbd");   /* past U+10FFFF */
}

static void test_no_room(void **state)
{
    (void)state;
    char out[4] = {'x', 'x', 'x', 'x'};
    assert_int_equal(py_utf8_put(out, 3, 0x1f600), 0);
    assert_int_equal(py_utf8_put(out, 1, 0xe9), 0);
    assert_int_equal(py_utf8_put(out, 0, 'A'), 0);
    assert_memory_equal(out, "xxxx", 4);
    assert_int_equal(py_utf8_put(out, 2, 0xe9), 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_widths),
        cmocka_unit_test(test_utf8),
        cmocka_unit_test(test_no_room),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
