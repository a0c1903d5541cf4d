/*
 * test_top_escape.c — the filter that makes a program's output safe for
 * trc-top's "output:" line (tools/common/top_escape.c), on byte strings:
 * CSI sequences, OSC/DCS strings ended by BEL or by ST (ESC backslash,
 * which once left its backslash behind), lone ESC sequences with their
 * intermediate and final bytes, sequences cut off by the end, other
 * control characters as spaces, UTF-8 text untouched, and the size of
 * the output respected.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tools/common/top_escape.h"

static const char *strip(const char *in, size_t len)
{
    static char out[256];
    size_t k = top_escape_strip(in, len, out, sizeof out);
    assert_int_equal(k, strlen(out));
    return out;
}

#define S(lit) strip(lit, sizeof lit - 1)

static void test_csi(void **state)
{
    assert_string_equal(S("\033[1;31mred\033[0m plain"), "red plain");
    assert_string_equal(S("\033[Hhome\033[2J"), "home");
    assert_string_equal(S("\033[?25lcursor hidden\033[?25h"), "cursor hidden");
    /* an intermediate byte before the final one (DECSCUSR) */
    assert_string_equal(S("a\033[2 qb"), "ab");
    /* malformed: a control byte inside ends it, shown as a space */
    assert_string_equal(S("a\033[12\nb"), "a b");
}

static void test_strings(void **state)
{
    /* OSC ended by BEL, and by ST: no stray backslash */
    assert_string_equal(S("\033]0;title\007after"), "after");
    assert_string_equal(S("a\033]0;title\033\\b"), "ab");
    assert_string_equal(S("\033]8;;http://x/\033\\link\033]8;;\033\\ done"), "link done");
    /* DCS, APC, PM, SOS: up to ST */
    assert_string_equal(S("\033Pq#0;2;0;0;0#0~~\033\\after"), "after");
    assert_string_equal(S("x\033_apc\033\\y\033^pm\033\\z\033Xsos\033\\!"), "xyz!");
    /* an ESC that is not ST ends the string and starts a sequence */
    assert_string_equal(S("\033]0;t\033[1mbold"), "bold");
}

static void test_lone_escapes(void **state)
{
    assert_string_equal(S("\033(Bascii"), "ascii");
    assert_string_equal(S("\0337saved\0338"), "saved");
    assert_string_equal(S("\033#8x"), "x");
    assert_string_equal(S("\033=\033>keypad"), "keypad");
    /* ESC then a control byte: the ESC alone goes, the byte is a space */
    assert_string_equal(S("a\033\tb"), "a b");
}

static void test_cut_off(void **state)
{
    assert_string_equal(S("abc\033"), "abc");
    assert_string_equal(S("x\033[12"), "x");
    assert_string_equal(S("x\033]0;no end"), "x");
    assert_string_equal(S("x\033]0;t\033"), "x");
    assert_string_equal(S("x\033("), "x");
}

static void test_controls_and_text(void **state)
{
    assert_string_equal(S("tab\there\r"), "tab here ");
    assert_string_equal(S("bell\007 del\177."), "bell  del .");
    assert_string_equal(S("caf\xc3\xa9 \xe8\xa8\x88"), "caf\xc3\xa9 \xe8\xa8\x88");
    /* an empty input and a NUL byte inside */
    assert_string_equal(strip("", 0), "");
    assert_string_equal(strip("a\0b", 3), "a b");
}

static void test_size(void **state)
{
    char out[4];
    assert_int_equal(top_escape_strip("\033[1mabcdef", 10, out, sizeof out), 3);
    assert_string_equal(out, "abc");
    out[0] = 'z';
    assert_int_equal(top_escape_strip("abc", 3, out, 1), 0);
    assert_string_equal(out, "");
    out[0] = 'z';
    assert_int_equal(top_escape_strip("abc", 3, out, 0), 0);
    assert_int_equal(out[0], 'z');
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_csi),
        cmocka_unit_test(test_strings),
        cmocka_unit_test(test_lone_escapes),
        cmocka_unit_test(test_cut_off),
        cmocka_unit_test(test_controls_and_text),
        cmocka_unit_test(test_size),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
