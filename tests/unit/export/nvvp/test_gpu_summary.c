/*
 * tests/unit/export/nvvp/test_gpu_summary.c — the `trc-stats --gpu` sink
 * (lib/export/nvvp/gpu_summary.c) on the fake-CUPTI fixture
 * (fixtures/gpu/fake_train.trc, from tests/gpu/make_fixture.c).
 *
 * The expected figures are worked out by hand from the scenario's
 * timeline (tests/gpu/fake_scenario.c), independently of the code; the
 * whole text is also compared with fixtures/gpu/fake_train.summary.txt
 * (produced by the code — TRC_GPU_REGEN=1 rewrites it once the figures
 * above hold — and checked against those figures by eye).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/export/nvvp/gpu_summary.h"

#define FIXTURE "fixtures/gpu/fake_train.trc"
#define GOLDEN "fixtures/gpu/fake_train.summary.txt"

static char *summarise(const char *path, uint64_t *acts, uint64_t *apis)
{
    trc_status st;
    trc_reader *r = trc_reader_open_path(path, &st);
    const trc_event *ev;
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    gpu_summary *s = gpu_summary_new();

    assert_non_null(r);
    assert_non_null(s);
    while ((st = trc_reader_next(r, &ev)) == TRC_OK)
        assert_int_equal(gpu_summary_event(s, r, ev), 0);
    assert_int_equal(st, TRC_ERR_EOF);
    assert_int_equal(gpu_summary_print(s, out), 0);
    fclose(out);
    *acts = gpu_summary_activities(s);
    *apis = gpu_summary_api_calls(s);
    gpu_summary_free(s);
    trc_reader_free(r);
    return text;
}

/* The line whose Name column is name, or NULL. */
static const char *row(const char *text, const char *name)
{
    const char *p = text;
    size_t n = strlen(name);
    while ((p = strstr(p, name))) {
        if (p[-1] == ' ' && (p[n] == '\n')) {
            while (p > text && p[-1] != '\n')
                p--;
            return p;
        }
        p += n;
    }
    return NULL;
}

static void expect_row(const char *text, const char *cells, const char *name)
{
    const char *r = row(text, name);
    char line[512];
    assert_non_null(r);
    snprintf(line, sizeof line, "%.*s", (int)strcspn(r, "\n"), r);
    if (!strstr(line, cells))
        fail_msg("row '%s' lacks '%s'", line, cells);
}

static void test_fixture(void **state)
{
    uint64_t acts, apis;
    char *text = summarise(FIXTURE, &acts, &apis);

    assert_int_equal(acts, 4 + 4 + 1);   /* kernels, copies, memset */
    assert_int_equal(apis, 14);
    assert_non_null(strstr(text, "            Type  Time(%)      Time     Calls       Avg       Min       Max  Name\n"));
    /* GPU total = 300 + 269 + 129 + 100 + 88 + 10 + 9 + 9 = 914 us */
    expect_row(text, " GPU activities:   32.82%  300.00us         1  300.00us  300.00us  300.00us  ",
               "ampere_sgemm_128x64_nn");
    /* vectorAdd: 200 us + 69 us */
    expect_row(text, "29.43%  269.00us         2  134.50us  69.000us  200.00us  ",
               "vectorAdd(float const*, float const*, float*, int)");
    expect_row(text, "14.11%  129.00us         1", "[CUDA memcpy PtoP]");
    expect_row(text, "10.94%  100.00us", "[CUDA memcpy HtoD]");
    expect_row(text, "9.63%  88.000us", "[CUDA memcpy DtoH]");
    expect_row(text, "0.99%  9.0000us", "[CUDA memcpy DtoD]");
    expect_row(text, "0.99%  9.0000us", "[CUDA memset]");
    expect_row(text, "1.09%  10.000us",
               "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
               "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, "
               "at::detail::Array<char*, 1>)");
    /* API total = 464+90+48+18+17+8+5+4+4 = 658 us; noisy calls absent */
    expect_row(text, "      API calls:   70.52%  464.00us         1", "cudaStreamSynchronize");
    expect_row(text, "2.74%  18.000us         3  6.0000us  4.0000us  10.000us  ", "cudaMemcpyAsync");
    expect_row(text, "2.58%  17.000us         4  4.2500us  4.0000us  5.0000us  ", "cudaLaunchKernel");
    expect_row(text, "0.76%  5.0000us         1", "cuLaunchKernel");
    assert_null(strstr(text, "cudaGetDevice"));
    assert_null(strstr(text, "cuCtxGetCurrent"));
    /* GPU activities before API calls; sorted by time within each */
    assert_true(strstr(text, "GPU activities:") < strstr(text, "API calls:"));
    assert_true(row(text, "ampere_sgemm_128x64_nn") < row(text, "[CUDA memcpy HtoD]"));
    /* the 3 dropped records and the kernel without timestamps */
    assert_non_null(strstr(text, "4 GPU activity records were dropped"));

    if (getenv("TRC_GPU_REGEN")) {   /* fixtures/gpu/regenerate.sh, after the checks above */
        FILE *w = fopen(GOLDEN, "w");
        assert_non_null(w);
        fputs(text, w);
        fclose(w);
    }
    FILE *g = fopen(GOLDEN, "r");
    char golden[8192];
    assert_non_null(g);
    size_t n = fread(golden, 1, sizeof golden - 1, g);
    fclose(g);
    golden[n] = 0;
    assert_string_equal(text, golden);
    free(text);
}

static int fd_write(void *ctx, const void *buf, size_t len)
{
    return fwrite(buf, 1, len, ctx) == len ? 0 : -1;
}

static void test_no_gpu_data(void **state)
{
    char path[] = "/tmp/trc-gpu-sum-XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fdopen(fd, "wb");
    trc_status st;
    uint32_t th;
    uint64_t acts, apis;
    trc_writer *w = trc_writer_open_callback(fd_write, f, NULL, &st);
    assert_non_null(w);
    assert_int_equal(trc_writer_thread(w, 1, 1, "main", &th), TRC_OK);
    assert_int_equal(trc_writer_close(w, 0), TRC_OK);
    fclose(f);
    char *text = summarise(path, &acts, &apis);
    assert_string_equal(text, "No GPU activities or API calls recorded.\n");
    assert_int_equal(acts + apis, 0);
    free(text);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixture),
        cmocka_unit_test(test_no_gpu_data),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
