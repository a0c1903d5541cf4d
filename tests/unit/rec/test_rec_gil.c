/*
 * test_rec_gil.c — the GIL bits trec writes in a sample
 * (rec_sample_flags, lib/rec/target.c; spec §7.7): with --gil a thread
 * known to hold the GIL or not says so; a thread whose holder lib/py
 * could not tell says nothing; and in a process without a GIL (a
 * free-threaded CPython running without it, py_proc_no_gil) no thread
 * says anything, not even a native thread that has no thread state and
 * so would otherwise be "known, not held".
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "lib/rec/rec_int.h"

#define KNOWN TRC_SAMPLE_GIL_KNOWN
#define HOLDS TRC_SAMPLE_HOLDS_GIL

static uint32_t flags(int gil, int no_gil, int holds_gil, int on_cpu)
{
    rec_tick_ctx ctx = { 0 };
    py_thread_info ti = { 0 };

    ctx.gil = gil;
    ctx.no_gil = no_gil;
    ti.holds_gil = holds_gil;
    return rec_sample_flags(&ctx, &ti, on_cpu);
}

static void test_gil_build(void **state)
{
    assert_int_equal(flags(1, 0, 1, 1), TRC_SAMPLE_ON_CPU | KNOWN | HOLDS);
    assert_int_equal(flags(1, 0, 0, 0), KNOWN);
    assert_int_equal(flags(1, 0, -1, 0), 0);   /* not told: nothing claimed */
    assert_int_equal(flags(0, 0, 1, 1), TRC_SAMPLE_ON_CPU);   /* without --gil */
}

static void test_no_gil(void **state)
{
    assert_int_equal(flags(1, 1, 0, 1), TRC_SAMPLE_ON_CPU);   /* a native thread */
    assert_int_equal(flags(1, 1, -1, 0), 0);
    assert_int_equal(flags(1, 1, 1, 0), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gil_build),
        cmocka_unit_test(test_no_gil),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
