/*
 * test_collapsed.c — folded-stack output (lib/export/common/collapsed.c):
 * escaping of names the format cannot carry, the portable line grammar,
 * shortened paths, merging of stacks that render alike, root frames for
 * threads and processes, weights in microseconds.
 */
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lib/export/folded/folded.h"
#include "lib/export/common/short_path.h"
#include "tests/support/folded_traces.h"

#define ON (TRC_SAMPLE_ON_CPU | TRC_SAMPLE_HOLDS_GIL | TRC_SAMPLE_GIL_KNOWN)

/* Folded output of every sample of b (caller frees). */
static char *folded(conv_tb *b, const exp_collapsed_options *o, uint64_t *samples)
{
    assert_int_equal(conv_tb_status(b), TRC_OK);
    trc_reader *r = conv_tb_reader(b);
    assert_non_null(r);
    exp_collapsed *c = exp_collapsed_new(o);
    const trc_event *ev;
    while (trc_reader_next(r, &ev) == TRC_OK) {
        if (ev->type == TRC_EV_SAMPLE)
            assert_int_equal(exp_collapsed_add(c, r, &ev->u.sample), TRC_OK);
    }
    char *data = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&data, &len);
    assert_int_equal(exp_collapsed_write(c, r, f), TRC_OK);
    fclose(f);
    if (samples)
        *samples = exp_collapsed_samples(c);
    exp_collapsed_free(c);
    trc_reader_free(r);
    return data;
}

/* Every line matches the portable grammar; returns the sum of counts. */
static uint64_t check_grammar(const char *text)
{
    regex_t re;
    assert_int_equal(regcomp(&re, "^[^ ]+( [^ ]+)* [0-9]+$", REG_EXTENDED | REG_NOSUB), 0);
    uint64_t sum = 0;
    char *copy = strdup(text), *save = NULL;
    for (char *ln = strtok_r(copy, "\n", &save); ln; ln = strtok_r(NULL, "\n", &save)) {
        if (regexec(&re, ln, 0, NULL, 0) != 0)
            fail_msg("line breaks the grammar: '%s'", ln);
        sum += strtoull(strrchr(ln, ' ') + 1, NULL, 10);
    }
    free(copy);
    regfree(&re);
    return sum;
}

static void test_escaping(void **state)
{
    conv_tb *b = conv_tb_new();
    uint32_t th = conv_tb_thread(b, 1, 1, "main");
    uint32_t a = conv_tb_frame(b, "a;b%c\nd", "x.py", 3, 1);
    uint32_t sp = conv_tb_frame(b, " lead  mid trail ", "odd dir/y.py", 0, 0);
    uint32_t e = conv_tb_frame(b, "", "z.py", 1, 1);
    conv_tb_sample(b, 0, th, conv_tb_stack(b, 3, (uint32_t[]){a, sp, e}), ON, 0);
    exp_collapsed_options o = {0};
    o.full_filenames = 1;
    char *out = folded(b, &o, NULL);
    assert_string_equal(out, "a%3Bb%25c%0Ad (x.py:3);%20lead%20%20mid trail%20 (odd dir/y.py);"
                             "<unknown> (z.py:1) 1\n");
    assert_int_equal(check_grammar(out), 1);
    free(out);
    conv_tb_free(b);
}

static void test_short_paths(void **state)
{
    assert_string_equal(exp_short_path("/v/lib/python3.11/site-packages/numpy/core/a.py"),
                        "numpy/core/a.py");
    assert_string_equal(exp_short_path("/usr/lib/python3/dist-packages/apt/x.py"), "apt/x.py");
    assert_string_equal(exp_short_path("/usr/lib/python3.11/json/decoder.py"),
                        "json/decoder.py");
    assert_string_equal(exp_short_path("/home/u/.pyenv/versions/3.12.1/lib/python3.12/threading.py"),
                        "threading.py");
    assert_string_equal(exp_short_path("/home/u/proj/app.py"), "proj/app.py");
    assert_string_equal(exp_short_path("app.py"), "app.py");
    assert_string_equal(exp_short_path("pkg/app.py"), "pkg/app.py");
    assert_string_equal(exp_short_path("<frozen importlib._bootstrap>"),
                        "<frozen importlib._bootstrap>");
}

static void test_merge_and_options(void **state)
{
    conv_tb *b = conv_tb_new();
    trc_process p = {0, 7, 1, "/usr/bin/python3.11", "CPython 3.11", "python3 x.py", 0, -1, "", ""};
    assert_int_equal(trc_writer_process(conv_tb_writer(b), &p), TRC_OK);
    uint32_t t1 = conv_tb_thread(b, 7, 7, "MainThread"), t2 = conv_tb_thread(b, 7, 8, "");
    uint32_t m10 = conv_tb_frame(b, "main", "/home/u/p/app.py", 10, 1);
    uint32_t m12 = conv_tb_frame(b, "main", "/home/u/p/app.py", 12, 1);
    uint32_t s10 = conv_tb_stack(b, 1, &m10), s12 = conv_tb_stack(b, 1, &m12);
    conv_tb_sample(b, 0, t1, s10, ON, 0);
    conv_tb_sample(b, 1, t1, s12, ON, 0);
    conv_tb_sample(b, 2, t1, s12, ON, 2500000);
    conv_tb_sample(b, 3, t2, s10, ON, 0);
    conv_tb_sample(b, 4, t2, 0, ON, 0);

    exp_collapsed_options o = {0};
    uint64_t n;
    char *out = folded(b, &o, &n);
    assert_string_equal(out, EXP_NO_PYTHON_FRAMES " 1\nmain (p/app.py:10) 2\nmain (p/app.py:12) 2\n");
    assert_int_equal(n, 5);
    assert_int_equal(check_grammar(out), 5);
    free(out);

    o.no_lines = 1;
    out = folded(b, &o, NULL);
    assert_string_equal(out, EXP_NO_PYTHON_FRAMES " 1\nmain (p/app.py) 4\n");
    free(out);

    o.threads = 1;
    o.pids = 1;
    out = folded(b, &o, NULL);
    assert_string_equal(out, "x.py (pid 7);<unnamed> (tid 8);" EXP_NO_PYTHON_FRAMES " 1\n"
                             "x.py (pid 7);<unnamed> (tid 8);main (p/app.py) 1\n"
                             "x.py (pid 7);MainThread (tid 7);main (p/app.py) 3\n");
    assert_int_equal(check_grammar(out), 5);
    free(out);

    memset(&o, 0, sizeof o);
    o.weight_us = 1;
    o.no_lines = 1;
    out = folded(b, &o, NULL);
    assert_string_equal(out, EXP_NO_PYTHON_FRAMES " 1000\nmain (p/app.py) 5500\n");
    free(out);
    conv_tb_free(b);
}

/* --no-lines merges the lines of one function but never functions of
 * different files that share a name. */
static void test_no_lines_keeps_files_apart(void **state)
{
    conv_tb *b = conv_tb_new();
    uint32_t th = conv_tb_thread(b, 1, 1, "main");
    uint32_t mod_a = conv_tb_frame(b, "<module>", "/w/a.py", 3, 1);
    uint32_t mod_b = conv_tb_frame(b, "<module>", "/w/b.py", 4, 1);
    uint32_t fwd_a = conv_tb_frame(b, "forward", "/w/a.py", 10, 9);
    uint32_t fwd_a2 = conv_tb_frame(b, "forward", "/w/a.py", 11, 9);
    uint32_t fwd_b = conv_tb_frame(b, "forward", "/w/b.py", 20, 19);
    conv_tb_sample(b, 0, th, conv_tb_stack(b, 2, (uint32_t[]){mod_a, fwd_a}), ON, 0);
    conv_tb_sample(b, 1, th, conv_tb_stack(b, 2, (uint32_t[]){mod_a, fwd_a2}), ON, 0);
    conv_tb_sample(b, 2, th, conv_tb_stack(b, 2, (uint32_t[]){mod_b, fwd_b}), ON, 0);
    conv_tb_sample(b, 3, th, conv_tb_stack(b, 2, (uint32_t[]){mod_a, fwd_b}), ON, 0);
    exp_collapsed_options o = {0};
    o.no_lines = 1;
    char *out = folded(b, &o, NULL);
    assert_string_equal(out, "<module> (w/a.py);forward (w/a.py) 2\n"
                             "<module> (w/a.py);forward (w/b.py) 1\n"
                             "<module> (w/b.py);forward (w/b.py) 1\n");
    free(out);
    o.full_filenames = 1;
    out = folded(b, &o, NULL);
    assert_string_equal(out, "<module> (/w/a.py);forward (/w/a.py) 2\n"
                             "<module> (/w/a.py);forward (/w/b.py) 1\n"
                             "<module> (/w/b.py);forward (/w/b.py) 1\n");
    free(out);
    conv_tb_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escaping),
        cmocka_unit_test(test_short_paths),
        cmocka_unit_test(test_merge_and_options),
        cmocka_unit_test(test_no_lines_keeps_files_apart),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
