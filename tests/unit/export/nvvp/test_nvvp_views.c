/*
 * test_nvvp_views — the GPU views over the synthetic fixture trace
 * (tests/support/nvvp_traces.c), read through the real reader: the
 * summary's totals equal the generator's sums, the collector sorts and
 * correlates, the tables have one row per activity, the SVG is produced,
 * and every allocation failure on the way is reported as TRC_ERR_NOMEM
 * without a crash or a leak (run under `make asan`).
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/util/alloc.h"
#include "lib/export/nvvp/nvvp_data.h"
#include "lib/export/nvvp/nvvp_summary.h"
#include "lib/export/nvvp/nvvp_svg.h"
#include "lib/export/nvvp/nvvp_trace.h"
#include "tests/support/nvvp_traces.h"

static char fixture_path[64];
static nvvp_trace_info info;

static int setup(void **state)
{
    strcpy(fixture_path, "/tmp/test_nvvp_views.XXXXXX");
    int fd = mkstemp(fixture_path);
    if (fd < 0)
        return -1;
    trc_status st = nvvp_trace_write_fixture(fd, &info);
    close(fd);
    return st == TRC_OK ? 0 : -1;
}

static int teardown(void **state)
{
    unlink(fixture_path);
    return 0;
}

/* Feed every event of the fixture to a summary and/or a collector. */
static trc_status feed(trc_reader *r, nvvp_summary *s, nvvp_data *d)
{
    const trc_event *ev;
    trc_status st;
    while ((st = trc_reader_next(r, &ev)) == TRC_OK) {
        if (s && (st = nvvp_summary_add(s, r, ev)) != TRC_OK)
            return st;
        if (d && (st = nvvp_data_add(d, r, ev)) != TRC_OK)
            return st;
    }
    return st == TRC_ERR_EOF ? TRC_OK : st;
}

static size_t count_lines(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

static void test_summary_totals(void **state)
{
    trc_reader *r = trc_reader_open_path(fixture_path, NULL);
    assert_non_null(r);
    nvvp_summary *s = nvvp_summary_new();
    assert_non_null(s);
    assert_int_equal(feed(r, s, NULL), TRC_OK);
    assert_int_equal(nvvp_summary_total_ns(s, 0), info.kernel_ns + info.memcpy_ns + info.memset_ns);
    assert_int_equal(nvvp_summary_total_ns(s, 1), info.api_ns);
    uint64_t kernel_ns = 0, kernel_calls = 0, rows = 0;
    nvvp_summary_row row;
    uint64_t prev = UINT64_MAX;
    for (size_t i = 0; nvvp_summary_row_at(s, 0, i, &row); i++) {
        rows++;
        assert_true(row.total_ns <= prev); /* sorted by time, largest first */
        prev = row.total_ns;
        if (row.name[0] != '[') {
            kernel_ns += row.total_ns;
            kernel_calls += row.calls;
        }
        assert_true(row.min_ns <= row.max_ns);
    }
    assert_int_equal(kernel_ns, info.kernel_ns);
    assert_int_equal(kernel_calls, info.kernels);
    assert_int_equal(rows, info.kernel_names + 5 /* HtoD DtoH DtoD PtoP HtoH */ + 1 /* memset */);
    assert_true(nvvp_summary_row_at(s, 0, 0, &row));
    assert_string_equal(row.name, "void gemm_kernel<float, 128>(float const*, float const*, float*, int)");
    assert_int_equal(row.calls, 6);
    assert_int_equal(row.min_ns, 1000000);
    assert_int_equal(row.max_ns, 2000000);

    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    nvvp_summary_opts o = {1, NVVP_SORT_CALLS, 2};
    assert_int_equal(nvvp_summary_write(s, r, &o, f), TRC_OK);
    fclose(f);
    /* CSV, limited to 2 rows per section: header, units, 2 + 2 rows */
    assert_int_equal(count_lines(text), 6);
    assert_non_null(strstr(text, "\"API calls\",2.378,165.000,18,9.167,7.000,12.000,\"cudaLaunchKernel\""));
    free(text);
    nvvp_summary_free(s);
    trc_reader_free(r);
}

static void test_collector_and_tables(void **state)
{
    trc_reader *r = trc_reader_open_path(fixture_path, NULL);
    assert_non_null(r);
    nvvp_data *d = nvvp_data_new(NVVP_WANT_ALL);
    assert_non_null(d);
    assert_int_equal(feed(r, NULL, d), TRC_OK);
    assert_int_equal(nvvp_data_finish(d), TRC_OK);
    assert_int_equal(d->n_acts, info.kernels + info.memcpys + info.memsets + info.syncs);
    assert_int_equal(d->n_apis, info.api_calls);
    for (size_t i = 1; i < d->n_acts; i++)
        assert_true(d->acts[i - 1].start <= d->acts[i].start);
    /* correlation 102 is shared by cudaLaunchKernel (with a Python stack)
     * and the cuLaunchKernel under it: the launch site is the runtime call */
    const nvvp_api *a = nvvp_data_api_by_corr(d, 4242, 102);
    assert_non_null(a);
    assert_string_equal(name_pool_str(&d->pool, a->name), "cudaLaunchKernel");
    assert_string_equal(nvvp_data_site(d, r, a->stack), "proj/model.py:17(Model.forward)");
    assert_null(nvvp_data_api_by_corr(d, 4242, 99999));
    assert_null(nvvp_data_api_by_corr(d, 1, 102));
    assert_int_equal(d->n_losses, 1);

    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    nvvp_table_opts to = {1, d->trace_start};
    assert_int_equal(nvvp_gpu_trace_write(d, r, &to, f), TRC_OK);
    fclose(f);
    assert_int_equal(count_lines(text), 2 + info.kernels + info.memcpys + info.memsets);
    /* the first record by start: the HtoD copy of iteration 0 at 1.35 ms */
    assert_non_null(strstr(text, "\n1350.000,350.000,,,,,,,,,,4194304,11428.571,\"Pinned\",\"Device\","
                                 "\"NVIDIA H100 80GB HBM3 (0)\",1,13,\"[CUDA memcpy HtoD]\",101\n"));
    free(text);

    text = NULL;
    f = open_memstream(&text, &len);
    to.csv = 0;
    assert_int_equal(nvvp_api_trace_write(d, r, &to, f), TRC_OK);
    fclose(f);
    assert_int_equal(count_lines(text), 1 + info.api_calls);
    assert_non_null(strstr(text, "proj/data.py:9(load_batch)\n"));
    free(text);

    text = NULL;
    f = open_memstream(&text, &len);
    nvvp_svg_opts so = {800, -1, -1, "fixture", NULL, 0};
    assert_int_equal(nvvp_svg_write(d, r, &so, f), TRC_OK);
    fclose(f);
    assert_non_null(strstr(text, "<svg"));
    assert_non_null(strstr(text, "Memcpy (PtoP)"));
    assert_non_null(strstr(text, "launched by cudaLaunchKernel on MainThread (tid 4242)"));
    free(text);
    nvvp_data_free(d);
    trc_reader_free(r);
}

/* Every failing allocation (reader's included) ends in TRC_ERR_NOMEM,
 * never a crash, and everything is freed. */
static void test_oom(void **state)
{
    int done = 0;
    long n;
    for (n = 1; n < 20000 && !done; n += n < 400 ? 1 : 37) {
        trc_reader *r = trc_reader_open_path(fixture_path, NULL);
        assert_non_null(r);
        nvvp_data *d = NULL;
        nvvp_summary *s = NULL;
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        trc_alloc_fail_after(n);
        trc_status st = TRC_ERR_NOMEM;
        d = nvvp_data_new(NVVP_WANT_ALL);
        s = nvvp_summary_new();
        if (d && s)
            st = feed(r, s, d);
        if (st == TRC_OK)
            st = nvvp_data_finish(d);
        nvvp_table_opts to = {0, 0};
        if (st == TRC_OK)
            st = nvvp_gpu_trace_write(d, r, &to, f);
        if (st == TRC_OK)
            st = nvvp_api_trace_write(d, r, &to, f);
        nvvp_summary_opts so = {0, 0, 0};
        if (st == TRC_OK)
            st = nvvp_summary_write(s, r, &so, f);
        nvvp_svg_opts vo = {600, -1, -1, NULL, NULL, 0};
        if (st == TRC_OK)
            st = nvvp_svg_write(d, r, &vo, f);
        trc_alloc_fail_after(-1);
        if (st != TRC_OK && st != TRC_ERR_NOMEM)
            fail_msg("allocation %ld: status %d", n, (int)st);
        done = st == TRC_OK;
        fclose(f);
        free(text);
        nvvp_data_free(d);
        nvvp_summary_free(s);
        trc_reader_free(r);
    }
    assert_true(done);
    print_message("oom: first success when allocation %ld fails\n", n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_summary_totals),
        cmocka_unit_test(test_collector_and_tables),
        cmocka_unit_test(test_oom),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
