/*
 * test_gpu_units — nvprof-style number formatting (lib/export/common/gpu_units.c)
 * and the string pool (lib/export/common/name_pool.c).  Expected strings follow
 * what nvprof prints: 5 significant digits with a unit suffix, integers
 * below 1 us / 1 KB.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "lib/util/alloc.h"
#include "lib/export/common/name_pool.h"
#include "lib/export/common/gpu_units.h"

static void check_time(int64_t ns, int sig, const char *want)
{
    char b[GPU_NUM_BUF];
    gpu_fmt_time(b, ns, sig);
    if (strcmp(b, want) != 0)
        fail_msg("time %lld sig %d: got '%s', want '%s'", (long long)ns, sig, b, want);
}

static void test_time(void **state)
{
    check_time(0, 5, "0ns");
    check_time(992, 5, "992ns");
    check_time(1000, 5, "1.0000us");
    check_time(1152, 5, "1.1520us");
    check_time(82592, 5, "82.592us");
    check_time(540000, 5, "540.00us");
    check_time(999994, 5, "999.99us");
    check_time(999995, 5, "1.0000ms"); /* rounding carries into the next unit */
    check_time(1288000, 5, "1.2880ms");
    check_time(271840000, 5, "271.84ms");
    check_time(1013840000, 6, "1.01384s");
    check_time(9999990000, 5, "10.000s");
    check_time(123456789012345, 5, "123457s");
    check_time(-1500, 5, "-1.5000us");
    check_time(-999, 5, "-999ns");
    char b[GPU_NUM_BUF];
    gpu_fmt_time(b, INT64_MIN, 9); /* must not overflow */
    assert_true(b[0] == '-' && strstr(b, "s") != NULL);
}

static void check_bytes(uint64_t v, const char *want)
{
    char b[GPU_NUM_BUF];
    gpu_fmt_bytes(b, v);
    if (strcmp(b, want) != 0)
        fail_msg("bytes %llu: got '%s', want '%s'", (unsigned long long)v, b, want);
}

static void test_bytes(void **state)
{
    check_bytes(0, "0B");
    check_bytes(256, "256B");
    check_bytes(1023, "1023B");
    check_bytes(1024, "1.0000KB");
    check_bytes(1536, "1.5000KB");
    check_bytes(65536, "64.000KB");
    check_bytes(4194304, "4.0000MB");
    check_bytes(8589934592ull, "8.0000GB");
    check_bytes(UINT64_MAX, "16777216TB");
}

static void test_throughput_and_fixed(void **state)
{
    char b[GPU_NUM_BUF];
    /* 4 MiB in 350 us = 11.161 GiB/s */
    assert_string_equal(gpu_fmt_throughput(b, 4u << 20, 350000), "11.161GB/s");
    assert_string_equal(gpu_fmt_throughput(b, 100, 1000000000), "100B/s");
    assert_string_equal(gpu_fmt_throughput(b, 100, 0), "-");
    assert_string_equal(gpu_fmt_rate(b, 1u << 20, 1000000000, 1048576, 3), "1.000");
    assert_string_equal(gpu_fmt_rate(b, 4u << 20, 350000, 1048576, 3), "11428.571");
    assert_string_equal(gpu_fmt_rate(b, 1, 0, 1048576, 3), "");
    assert_string_equal(gpu_fmt_fixed(b, 1500, 1000, 3), "1.500");
    assert_string_equal(gpu_fmt_fixed(b, 1234567, 1000, 3), "1234.567");
    assert_string_equal(gpu_fmt_fixed(b, -1, 1000, 3), "-0.001");
    assert_string_equal(gpu_fmt_fixed(b, -1, 1000000, 3), "0.000"); /* no "-0.000" */
    assert_string_equal(gpu_fmt_fixed(b, 5, 10, 0), "1");          /* half rounds up */
    assert_string_equal(gpu_fmt_u64(b, 18446744073709551615ull), "18446744073709551615");
}

static void test_names(void **state)
{
    assert_string_equal(gpu_copy_name(TRC_COPY_HTOD), "[CUDA memcpy HtoD]");
    assert_string_equal(gpu_copy_name(TRC_COPY_PTOP), "[CUDA memcpy PtoP]");
    assert_string_equal(gpu_copy_name((trc_copy_kind)77), "[CUDA memcpy]");
    assert_string_equal(gpu_memset_name(), "[CUDA memset]");
    assert_string_equal(gpu_mem_name(TRC_MEM_PINNED), "Pinned");
    assert_string_equal(gpu_mem_name((trc_mem_kind)99), "-");
}

static void test_pool(void **state)
{
    name_pool p;
    name_pool_init(&p);
    uint32_t a, b, c, e;
    char name[64];
    assert_int_equal(name_pool_intern(&p, "gemm", &a), TRC_OK);
    assert_int_equal(name_pool_intern(&p, "relu", &b), TRC_OK);
    strcpy(name, "gemm"); /* same content, other pointer */
    assert_int_equal(name_pool_intern(&p, name, &c), TRC_OK);
    assert_int_equal(name_pool_intern(&p, "", &e), TRC_OK);
    assert_int_equal(a, c);
    assert_int_not_equal(a, b);
    assert_int_equal(e, 0);
    strcpy(name, "other"); /* same pointer, new content: the cache must not lie */
    assert_int_equal(name_pool_intern(&p, name, &c), TRC_OK);
    assert_int_not_equal(c, a);
    assert_string_equal(name_pool_str(&p, a), "gemm");
    assert_int_equal(name_pool_len(&p, c), 5);
    assert_string_equal(name_pool_str(&p, 999), "");
    for (int i = 0; i < 5000; i++) { /* grows the table several times */
        snprintf(name, sizeof name, "kernel_%d", i);
        assert_int_equal(name_pool_intern(&p, name, &c), TRC_OK);
    }
    assert_int_equal(name_pool_intern(&p, "kernel_1234", &c), TRC_OK);
    assert_string_equal(name_pool_str(&p, c), "kernel_1234");
    assert_int_equal(name_pool_count(&p), 5004);
    name_pool_cleanup(&p);
}

static void test_pool_oom(void **state)
{
    char name[32];
    for (long n = 1; n < 40; n++) {
        name_pool p;
        name_pool_init(&p);
        trc_alloc_fail_after(n);
        trc_status st = TRC_OK;
        for (int i = 0; i < 600 && st == TRC_OK; i++) {
            uint32_t id;
            snprintf(name, sizeof name, "k%d", i);
            st = name_pool_intern(&p, name, &id);
            if (st == TRC_OK)
                assert_string_equal(name_pool_str(&p, id), name);
        }
        trc_alloc_fail_after(-1);
        assert_true(st == TRC_OK || st == TRC_ERR_NOMEM);
        name_pool_cleanup(&p); /* no leak under ASan */
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_time),
        cmocka_unit_test(test_bytes),
        cmocka_unit_test(test_throughput_and_fixed),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_pool),
        cmocka_unit_test(test_pool_oom),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
