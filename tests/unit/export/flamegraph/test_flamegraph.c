/*
 * test_flamegraph.c — trc2flamegraph's engine (lib/export/flamegraph/):
 * folded lines into a tree (names unescaped, children in name order,
 * kinds, off-CPU share), and the SVG: hostile names written as XML text,
 * names cut to their frame with "..", frames under --min-width left out,
 * --diff colours, an empty graph.  The geometry against flamegraph.pl's
 * rules and the viewer in a browser are tests/e2e/conv_flamegraph.sh's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lib/export/flamegraph/flamegraph.h"

static exp_flame_tree *tree_of(const char *const *lines, const uint64_t *values, size_t n,
                               int roots, int gpu)
{
    exp_flame_tree *t = exp_flame_tree_new();
    assert_non_null(t);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(exp_flame_tree_add(t, lines[i], values[i], values[i], values[i] * 1000,
                                            roots, gpu, 0),
                         TRC_OK);
    assert_int_equal(exp_flame_tree_finish(t), TRC_OK);
    return t;
}

static const exp_flame_node *child(const exp_flame_tree *t, uint32_t parent, const char *name)
{
    uint32_t i = exp_flame_tree_find(t, parent, name);
    assert_int_not_equal(i, UINT32_MAX);
    return exp_flame_tree_node(t, i);
}

static char *svg_of(const exp_flame_tree *t, const exp_flame_options *o)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    assert_int_equal(exp_flame_svg_write(t, o, 0, f), TRC_OK);
    fclose(f);
    return text;
}

static size_t count(const char *s, const char *what)
{
    size_t n = 0;
    for (const char *p = s; (p = strstr(p, what)); p += strlen(what))
        n++;
    return n;
}

static void test_tree(void **state)
{
    (void)state;
    const char *lines[] = {"main (a.py:1);b (a.py:2)", "main (a.py:1);c%3Bd (a.py:3)",
                           "main (a.py:1)", "<no Python frames>", "main (a.py:1);PyEval_X"};
    const uint64_t values[] = {3, 2, 1, 4, 5};
    exp_flame_tree *t = tree_of(lines, values, 5, 0, 0);
    const exp_flame_node *root = exp_flame_tree_node(t, 0);
    assert_string_equal(exp_flame_tree_name(t, root), "all");
    assert_int_equal(root->value, 15);
    assert_int_equal(root->nchild, 2);
    /* children in byte order: '<' (0x3c) before 'm' */
    assert_string_equal(exp_flame_tree_name(t, exp_flame_tree_node(t, exp_flame_tree_child(t, root->child0))),
                        "<no Python frames>");
    uint32_t main_id = exp_flame_tree_find(t, 0, "main (a.py:1)");
    const exp_flame_node *m = exp_flame_tree_node(t, main_id);
    assert_int_equal(m->value, 11);
    assert_int_equal(m->count, 11);
    assert_int_equal(m->ns, 11000);
    assert_int_equal(m->depth, 1);
    assert_int_equal(m->nchild, 3);
    assert_int_equal(m->kind, EXP_FLAME_PYTHON);
    /* the folded form's %3B is undone */
    assert_int_equal(child(t, main_id, "c;d (a.py:3)")->value, 2);
    assert_int_equal(child(t, main_id, "PyEval_X")->kind, EXP_FLAME_NATIVE);
    assert_int_equal(child(t, 0, "<no Python frames>")->kind, EXP_FLAME_OTHER);
    assert_int_equal(exp_flame_tree_find(t, main_id, "nope"), UINT32_MAX);
    exp_flame_tree_free(t);
}

static void test_kinds_roots_gpu_idle(void **state)
{
    (void)state;
    exp_flame_tree *t = exp_flame_tree_new();
    assert_non_null(t);
    assert_int_equal(exp_flame_tree_add(t, "worker (tid 5);f (a.py:1);sgemm", 7, 1, 7000, 1, 1, 0),
                     TRC_OK);
    assert_int_equal(exp_flame_tree_add(t, "worker (tid 5);f (a.py:1)", 3, 3, 3000, 1, 0, 1),
                     TRC_OK);
    assert_int_equal(exp_flame_tree_finish(t), TRC_OK);
    uint32_t w = exp_flame_tree_find(t, 0, "worker (tid 5)");
    assert_int_equal(exp_flame_tree_node(t, w)->kind, EXP_FLAME_OTHER);
    uint32_t f = exp_flame_tree_find(t, w, "f (a.py:1)");
    assert_int_equal(exp_flame_tree_node(t, f)->kind, EXP_FLAME_PYTHON);
    assert_int_equal(exp_flame_tree_node(t, f)->idle, 3);
    assert_int_equal(exp_flame_tree_node(t, f)->value, 10);
    assert_int_equal(child(t, f, "sgemm")->kind, EXP_FLAME_GPU);
    exp_flame_tree_free(t);
}

static void test_svg_hostile_names(void **state)
{
    (void)state;
    /* a control character, a stray continuation byte, an overlong '/', a
     * surrogate, then the XML specials and a long name in a thin frame */
    const char *lines[] = {"bad%01\x80\xc0\xaf\xed\xa0\x80<&>\"' (f.py:1)",
                           "a_rather_long_function_name_that_cannot_fit (f.py:2)", "wide (f.py:3)"};
    const uint64_t values[] = {50, 5, 45};
    exp_flame_tree *t = tree_of(lines, values, 3, 0, 0);
    exp_flame_options o = {.width = 1200, .min_width = 0.1, .title = "T <&>"};
    char *svg = svg_of(t, &o);
    for (const unsigned char *p = (const unsigned char *)svg; *p; p++)
        assert_true(*p >= 0x20 || *p == '\n');
    assert_non_null(strstr(svg, "<title>bad\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
                                "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd&lt;&amp;&gt;&quot;&apos; (f.py:1)\n"));
    assert_non_null(strstr(svg, ">T &lt;&amp;&gt;</text>"));
    /* 5 of 100 at 1180 px = 59 px, less 3 px of margin: 7 characters of
     * 7.08 px fit, 5 shown and ".." */
    assert_non_null(strstr(svg, ">a_rat..</text>"));
    assert_non_null(strstr(svg, ">wide (f.py:3)</text>"));
    assert_int_equal(count(svg, "<g class="), 4);
    assert_non_null(strstr(svg, "]]></script>\n</svg>\n"));
    free(svg);
    exp_flame_tree_free(t);
}

static void test_min_width_and_icicle(void **state)
{
    (void)state;
    const char *lines[] = {"a;b;c", "a;thin", "z"};
    const uint64_t values[] = {900, 1, 99};
    exp_flame_tree *t = tree_of(lines, values, 3, 0, 0);
    exp_flame_options o = {.width = 1020, .min_width = 2}; /* 1 px per unit */
    char *svg = svg_of(t, &o);
    assert_int_equal(count(svg, "<g class="), 5); /* all a b c z; not thin */
    assert_null(strstr(svg, "thin"));
    /* flame: 4 levels, the root at the bottom */
    assert_non_null(strstr(svg, "height=\"134\""));
    assert_non_null(strstr(svg, "<title>all\n1,000 samples, 100.00%, 1.000 ms</title><rect x=\"10.00\" y=\"84.0\" width=\"1000.00\""));
    free(svg);
    o.min_width = 0;
    o.icicle = 1;
    svg = svg_of(t, &o);
    assert_int_equal(count(svg, "<g class="), 6);
    assert_non_null(strstr(svg, "<title>all\n1,000 samples, 100.00%, 1.000 ms</title><rect x=\"10.00\" y=\"36.0\""));
    /* a's children from its left edge in name order: b at 10, thin at 910 */
    assert_non_null(strstr(svg, "<title>thin\n1 sample, 0.10%, 1.000 us</title><rect x=\"910.00\" y=\"68.0\" width=\"1.00\""));
    free(svg);
    exp_flame_tree_free(t);
}

static void test_diff_colours(void **state)
{
    (void)state;
    const char *now[] = {"a;b", "a;c", "new"};
    const uint64_t v_now[] = {50, 25, 25};
    const char *then[] = {"a;b", "a;c"};
    const uint64_t v_then[] = {2, 2}; /* shares: b 50 %, c 50 % */
    exp_flame_tree *t = tree_of(now, v_now, 3, 0, 0);
    exp_flame_tree *b = tree_of(then, v_then, 2, 0, 0);
    exp_flame_options o = {.width = 1200, .min_width = 0.1, .base = b, .base_name = "old.trc"};
    char *svg = svg_of(t, &o);
    /* b unchanged (50 % both), c shrank 25 points, new grew 25, a shrank 25 */
    assert_non_null(strstr(svg, "<title>b\n50 samples, 50.00%, 50.000 us\nold.trc: 50.00%, change +0.00 points</title>"));
    assert_non_null(strstr(svg, "old.trc: 50.00%, change +0.00 points</title><rect x=\"10.00\" y=\"36.0\" width=\"590.00\" height=\"15.0\" fill=\"rgb(235,235,235)\""));
    assert_non_null(strstr(svg, "<title>new\n25 samples, 25.00%, 25.000 us\nold.trc: 0.00%, change +25.00 points</title><rect x=\"895.00\" y=\"52.0\" width=\"295.00\" height=\"15.0\" fill=\"rgb(255,35,35)\""));
    assert_non_null(strstr(svg, "<title>c\n25 samples, 25.00%, 25.000 us\nold.trc: 50.00%, change -25.00 points</title><rect x=\"600.00\" y=\"36.0\" width=\"295.00\" height=\"15.0\" fill=\"rgb(35,35,255)\""));
    free(svg);
    exp_flame_tree_free(t);
    exp_flame_tree_free(b);
}

static void test_empty(void **state)
{
    (void)state;
    exp_flame_tree *t = tree_of(NULL, NULL, 0, 0, 0);
    exp_flame_options o = {.width = 1200, .min_width = 0.1};
    char *svg = svg_of(t, &o);
    assert_non_null(strstr(svg, ">no samples selected</text>"));
    assert_int_equal(count(svg, "<g class="), 0);
    free(svg);
    exp_flame_tree_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tree),
        cmocka_unit_test(test_kinds_roots_gpu_idle),
        cmocka_unit_test(test_svg_hostile_names),
        cmocka_unit_test(test_min_width_and_icicle),
        cmocka_unit_test(test_diff_colours),
        cmocka_unit_test(test_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
