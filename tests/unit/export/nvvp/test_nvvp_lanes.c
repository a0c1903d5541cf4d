/*
 * test_nvvp_lanes — the timeline geometry of lib/export/nvvp/nvvp_lanes.c:
 * concurrent intervals get their own lanes, wide intervals their own
 * boxes, sub-pixel intervals merge with exact counts, everything outside
 * the window is dropped, and the number of boxes stays bounded by the
 * width however many intervals there are.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lib/util/alloc.h"
#include "lib/export/nvvp/nvvp_lanes.h"

static const nvvp_scale SC = {0, 1000000, 100.0, 1000.0}; /* 1 px = 1 us */

static uint64_t total_count(const nvvp_boxes *b)
{
    uint64_t n = 0;
    for (size_t i = 0; i < b->n; i++)
        n += b->v[i].count;
    return n;
}

static void test_concurrent_get_lanes(void **state)
{
    nvvp_span s[4] = {{0, 100000, 0, 1}, {10000, 90000, 1, 2}, {20000, 30000, 2, 3},
                      {200000, 300000, 3, 1}};
    nvvp_boxes b = {0};
    assert_int_equal(nvvp_layout(s, 4, &SC, 8, &b), TRC_OK);
    assert_int_equal(b.lanes, 3);
    assert_int_equal(b.n, 4);
    for (size_t i = 0; i < b.n; i++) {
        assert_int_equal(b.v[i].count, 1);
        if (b.v[i].ref == 3)
            assert_int_equal(b.v[i].lane, 0); /* lane 0 is free again */
        if (b.v[i].ref == 2) {
            assert_int_equal(b.v[i].lane, 2);
            assert_true(b.v[i].x0 > 119.9 && b.v[i].x0 < 120.1);
            assert_true(b.v[i].x1 > 129.9 && b.v[i].x1 < 130.1);
        }
    }
    /* capped lanes: the fourth concurrent interval shares a lane */
    nvvp_span c[4] = {{0, 500000, 0, 1}, {0, 500000, 1, 1}, {0, 500000, 2, 1}, {0, 500000, 3, 1}};
    assert_int_equal(nvvp_layout(c, 4, &SC, 3, &b), TRC_OK);
    assert_int_equal(b.lanes, 3);
    assert_int_equal(total_count(&b), 4);
    nvvp_boxes_cleanup(&b);
}

static void test_subpixel_merge_counts(void **state)
{
    /* 500 intervals of 100 ns, 1 us apart: all closer than a pixel */
    nvvp_span s[500];
    for (int i = 0; i < 500; i++) {
        s[i].start = 1000 * (int64_t)i;
        s[i].end = s[i].start + 100;
        s[i].ref = (uint32_t)i;
        s[i].key = i % 5 == 0 ? 7 : 9; /* 100 x key 7, 400 x key 9 */
    }
    nvvp_boxes b = {0};
    assert_int_equal(nvvp_layout(s, 500, &SC, 4, &b), TRC_OK);
    assert_int_equal(b.n, 1);
    assert_int_equal(b.v[0].count, 500);
    assert_int_equal(b.v[0].busy_ns, 50000);
    assert_int_equal(nvvp_box_main_key(&b.v[0]), 9);
    assert_int_equal(b.v[0].n_keys, 2);
    assert_int_equal(b.v[0].other_count, 0);
    for (uint32_t k = 0; k < b.v[0].n_keys; k++)
        assert_int_equal(b.v[0].key_counts[k], b.v[0].keys[k] == 7 ? 100 : 400);
    /* a gap of more than a pixel splits the group */
    s[250].start = 650000;
    s[250].end = 650100;
    for (int i = 251; i < 500; i++) {
        s[i].start += 400000;
        s[i].end += 400000;
    }
    assert_int_equal(nvvp_layout(s, 500, &SC, 4, &b), TRC_OK);
    assert_int_equal(b.n, 2);
    assert_int_equal(total_count(&b), 500);
    nvvp_boxes_cleanup(&b);
}

static void test_window_clips(void **state)
{
    nvvp_span s[3] = {{-5000, -1000, 0, 1}, {-5000, 5000, 1, 1}, {999000, 2000000, 2, 1}};
    nvvp_boxes b = {0};
    assert_int_equal(nvvp_layout(s, 3, &SC, 4, &b), TRC_OK);
    assert_int_equal(b.n, 2);
    assert_int_equal(b.v[0].start, 0);
    assert_int_equal(b.v[0].end, 5000);
    assert_true(b.v[0].x0 >= 100.0);
    assert_int_equal(b.v[1].end, 1000000);
    assert_true(b.v[1].x1 <= 1100.0 + 1e-9);
    nvvp_boxes_cleanup(&b);
}

static void test_bounded(void **state)
{
    /* 1 M intervals of random sub-microsecond to 50 us lengths over 1 s on
     * 1000 px: the box count depends on the width, not on n */
    const size_t n = 1000000;
    nvvp_span *s = malloc(n * sizeof *s);
    assert_non_null(s);
    uint64_t x = 88172645463325252ull;
    int64_t t = 0;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        s[i].start = t;
        s[i].end = t + (int64_t)(x % 50000);
        s[i].ref = (uint32_t)i;
        s[i].key = (uint32_t)(x % 11);
        t += 1000;
    }
    nvvp_boxes b = {0};
    const nvvp_scale one_second = {0, 1000000000, 100.0, 1000.0};
    assert_int_equal(nvvp_layout(s, n, &one_second, 8, &b), TRC_OK);
    assert_true(b.lanes <= 8);
    assert_true(b.n <= (size_t)b.lanes * (2 * 1000 + 2));
    assert_int_equal(total_count(&b), n);
    for (size_t i = 0; i < b.n; i++)
        assert_true(b.v[i].x1 - b.v[i].x0 >= 1.0);
    nvvp_boxes_cleanup(&b);
    free(s);
}

static void test_oom(void **state)
{
    nvvp_span s[2000];
    for (int i = 0; i < 2000; i++) {
        s[i].start = 500 * (int64_t)i;
        s[i].end = s[i].start + 2000; /* 2 px wide, overlapping: several lanes */
        s[i].ref = (uint32_t)i;
        s[i].key = 1;
    }
    for (long k = 1; k < 8; k++) {
        nvvp_boxes b = {0};
        trc_alloc_fail_after(k);
        trc_status st = nvvp_layout(s, 2000, &SC, 8, &b);
        trc_alloc_fail_after(-1);
        assert_true(st == TRC_OK || st == TRC_ERR_NOMEM);
        nvvp_boxes_cleanup(&b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_concurrent_get_lanes),
        cmocka_unit_test(test_subpixel_merge_counts),
        cmocka_unit_test(test_window_clips),
        cmocka_unit_test(test_bounded),
        cmocka_unit_test(test_oom),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
