/*
 * test_lines.c — trc-lines' per-line aggregation (lib/export/lines):
 * on-CPU and wall time per line and per function, own time, recursion
 * counted once per sample, caller/callee edges, GPU time charged to the
 * launching lines, the choice of functions (--top, --idle, --function,
 * FILE:NAME, --file), the listed lines, the sources (--source-root,
 * missing file, a line past the end) and both outputs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "lib/export/lines/lines.h"
#include "tests/support/folded_traces.h"

#define ON (TRC_SAMPLE_ON_CPU | TRC_SAMPLE_HOLDS_GIL | TRC_SAMPLE_GIL_KNOWN)
#define IDLE 0u
#define MS 1000000ull

/* main (/srv/a.py, def 1) calls work (def 8) calls helper (/srv/b.py,
 * def 20); work recurses.  Samples (1 ms each), reader stacks learnt in
 * order:
 *   S1 main:3 work:10            6 on-CPU
 *   S2 main:3 work:11            2 on-CPU + 2 idle
 *   S3 main:3 work:11 helper:21  1 on-CPU
 *   S4 main:3 work:10 work:12    1 on-CPU (recursion, two lines)
 *   S5 main:4                    1 idle
 *   S6 main:3 work:10 work:10    1 on-CPU (recursion, one line)
 *   no Python frames             1 on-CPU */
typedef struct world {
    conv_tb *b;
    trc_reader *r;
    lines_agg *a;
    uint32_t stack[7];
} world;

static void world_open(world *w, int with_gpu)
{
    memset(w, 0, sizeof *w);
    w->b = conv_tb_new();
    uint32_t th = conv_tb_thread(w->b, 10, 11, "main");
    uint32_t m3 = conv_tb_frame(w->b, "main", "/srv/a.py", 3, 1);
    uint32_t m4 = conv_tb_frame(w->b, "main", "/srv/a.py", 4, 1);
    uint32_t w10 = conv_tb_frame(w->b, "work", "/srv/a.py", 10, 8);
    uint32_t w11 = conv_tb_frame(w->b, "work", "/srv/a.py", 11, 8);
    uint32_t w12 = conv_tb_frame(w->b, "work", "/srv/a.py", 12, 8);
    uint32_t h21 = conv_tb_frame(w->b, "helper", "/srv/b.py", 21, 20);
    uint32_t s1 = conv_tb_stack(w->b, 2, (uint32_t[]){m3, w10});
    uint32_t s2 = conv_tb_stack(w->b, 2, (uint32_t[]){m3, w11});
    uint32_t s3 = conv_tb_stack(w->b, 3, (uint32_t[]){m3, w11, h21});
    uint32_t s4 = conv_tb_stack(w->b, 3, (uint32_t[]){m3, w10, w12});
    uint32_t s5 = conv_tb_stack(w->b, 1, (uint32_t[]){m4});
    uint32_t s6 = conv_tb_stack(w->b, 3, (uint32_t[]){m3, w10, w10});
    double t = 0;
    conv_tb_sample(w->b, t++, th, s1, ON, 0);
    conv_tb_sample(w->b, t++, th, s2, ON, 0);
    conv_tb_sample(w->b, t++, th, s3, ON, 0);
    conv_tb_sample(w->b, t++, th, s4, ON, 0);
    conv_tb_sample(w->b, t++, th, s5, IDLE, 0);
    conv_tb_sample(w->b, t++, th, s6, ON, 0);
    conv_tb_sample(w->b, t++, th, 0, ON, 0);
    for (int i = 0; i < 5; i++)
        conv_tb_sample(w->b, t++, th, s1, ON, 0);
    conv_tb_sample(w->b, t++, th, s2, ON, 0);
    conv_tb_sample(w->b, t++, th, s2, IDLE, 0);
    conv_tb_sample(w->b, t++, th, s2, IDLE, 0);
    assert_int_equal(conv_tb_status(w->b), TRC_OK);
    w->r = conv_tb_reader(w->b);
    assert_non_null(w->r);
    w->a = lines_agg_new();
    assert_non_null(w->a);
    const trc_event *ev;
    int n = 0, samples = 0; /* the writer folds repeats: count samples */
    while (trc_reader_next(w->r, &ev) == TRC_OK) {
        if (ev->type != TRC_EV_SAMPLE)
            continue;
        if (n < 7)
            w->stack[n] = ev->u.sample.stack;
        n++;
        samples += (int)ev->u.sample.count;
        assert_int_equal(lines_agg_sample(w->a, &ev->u.sample), TRC_OK);
    }
    assert_int_equal(samples, 15);
    if (with_gpu) {
        exp_gpu_hit hs[] = {
            {10, 1, w->stack[0], EXP_GPU_PYTHON, EXP_GPU_KERNEL, 1, "gemm", 500000, 0, 0, 0},
            /* launched by a thread without Python frames, charged via thread 1 */
            {10, 2, w->stack[2], EXP_GPU_PYTHON, EXP_GPU_MEMCPY, 2, "[CUDA memcpy HtoD]", 7000, 1, 0, 0},
            {10, 1, 0, EXP_GPU_NO_PYTHON, EXP_GPU_KERNEL, 1, "gemm", 3000, 0, 0, 0},
            {10, 0, 0, EXP_GPU_UNKNOWN, EXP_GPU_KERNEL, 1, "gemm", 1000, 0, 0, 0},
        };
        for (size_t i = 0; i < 4; i++)
            assert_int_equal(lines_agg_gpu(w->a, &hs[i]), TRC_OK);
    }
    assert_int_equal(lines_agg_finish(w->a, w->r), TRC_OK);
}

static void world_close(world *w)
{
    lines_agg_free(w->a);
    trc_reader_free(w->r);
    conv_tb_free(w->b);
}

static const lines_func *find(const lines_agg *a, const char *name, uint32_t *index)
{
    for (size_t i = 0; i < lines_agg_func_count(a); i++)
        if (strcmp(lines_agg_func(a, i)->function, name) == 0) {
            if (index)
                *index = (uint32_t)i;
            return lines_agg_func(a, i);
        }
    fail_msg("no function %s", name);
    return NULL;
}

static const lines_row *row(const lines_agg *a, const lines_func *f, uint32_t line)
{
    for (uint32_t i = f->first_row; i < f->first_row + f->n_rows; i++)
        if (lines_agg_row(a, i)->line == line)
            return lines_agg_row(a, i);
    return NULL;
}

static void assert_time(const lines_time *t, uint64_t cpu_ms, uint64_t wall_ms, uint64_t gpu_ns)
{
    assert_int_equal(t->cpu_ns, cpu_ms * MS);
    assert_int_equal(t->wall_ns, wall_ms * MS);
    assert_int_equal(t->gpu_ns, gpu_ns);
}

static void test_functions_and_lines(void **state)
{
    world w;
    world_open(&w, 1);
    const lines_totals *tot = lines_agg_totals(w.a);
    assert_int_equal(tot->samples, 15);
    assert_time(&tot->t, 12, 15, 511000);
    assert_int_equal(tot->gpu_activities, 4);
    assert_int_equal(tot->gpu_unattributed_ns, 4000);
    assert_int_equal(tot->gpu_via_ns, 7000);

    const lines_func *m = find(w.a, "main", NULL), *wk = find(w.a, "work", NULL);
    const lines_func *h = find(w.a, "helper", NULL);
    assert_time(&m->cum, 11, 14, 507000);
    assert_time(&m->own, 0, 1, 0);
    assert_time(&wk->cum, 11, 13, 507000);   /* S4, S6 once each */
    assert_time(&wk->own, 10, 12, 500000);
    assert_time(&h->cum, 1, 1, 7000);
    assert_time(&h->own, 1, 1, 7000);
    assert_int_equal(wk->first_line, 8);
    assert_string_equal(h->file, "/srv/b.py");

    assert_int_equal(m->n_rows, 2);
    assert_time(&row(w.a, m, 3)->t, 11, 13, 507000);
    assert_time(&row(w.a, m, 4)->t, 0, 1, 0);
    assert_int_equal(wk->n_rows, 3);
    assert_time(&row(w.a, wk, 10)->t, 8, 8, 500000); /* S6's two frames: once */
    assert_time(&row(w.a, wk, 11)->t, 3, 5, 7000);
    assert_time(&row(w.a, wk, 12)->t, 1, 1, 0);
    assert_time(&row(w.a, h, 21)->t, 1, 1, 7000);
    /* rows of a function are in line order */
    assert_int_equal(lines_agg_row(w.a, wk->first_row)->line, 10);
    assert_int_equal(lines_agg_row(w.a, wk->first_row + 2)->line, 12);

    /* edges: main→work and work→helper; work→work is no edge */
    uint32_t fm, fw, fh, ids[3];
    find(w.a, "main", &fm);
    find(w.a, "work", &fw);
    find(w.a, "helper", &fh);
    assert_int_equal(lines_agg_edge_count(w.a), 2);
    assert_int_equal(lines_callers(w.a, fw, LINES_CPU, 0, ids, 3), 1);
    const lines_edge *e = lines_agg_edge(w.a, ids[0]);
    assert_int_equal(e->caller, fm);
    assert_time(&e->t, 11, 13, 507000);
    assert_int_equal(lines_callers(w.a, fw, LINES_CPU, 1, ids, 3), 1);
    e = lines_agg_edge(w.a, ids[0]);
    assert_int_equal(e->callee, fh);
    assert_time(&e->t, 1, 1, 7000);
    assert_int_equal(lines_callers(w.a, fm, LINES_CPU, 0, ids, 3), 0);
    world_close(&w);
}

static size_t pick(const lines_agg *a, const lines_opts *o, const char **names, size_t max)
{
    uint32_t *v;
    size_t n;
    assert_int_equal(lines_pick(a, o, &v, &n), TRC_OK);
    for (size_t i = 0; i < n && i < max; i++)
        names[i] = lines_agg_func(a, v[i])->function;
    free(v);
    return n;
}

static void test_pick(void **state)
{
    world w;
    world_open(&w, 0);
    const char *got[4];
    lines_opts o = {0};
    assert_int_equal(pick(w.a, &o, got, 4), 3); /* by own on-CPU: work 10, helper 1, main 0 */
    assert_string_equal(got[0], "work");
    assert_string_equal(got[1], "helper");
    assert_string_equal(got[2], "main");
    o.top = 1;
    assert_int_equal(pick(w.a, &o, got, 4), 1);
    o.top = 0;
    o.metric = LINES_WALL; /* own wall: work 12, main 1 = helper 1, main's cum larger */
    assert_int_equal(pick(w.a, &o, got, 4), 3);
    assert_string_equal(got[0], "work");
    assert_string_equal(got[1], "main");
    assert_string_equal(got[2], "helper");
    o.metric = LINES_CPU;
    o.function = "helper";
    assert_int_equal(pick(w.a, &o, got, 4), 1);
    assert_string_equal(got[0], "helper");
    o.function = "b.py:helper";
    assert_int_equal(pick(w.a, &o, got, 4), 1);
    o.function = "a.py:helper";
    assert_int_equal(pick(w.a, &o, got, 4), 0);
    o.function = "/srv/a.py:work";
    assert_int_equal(pick(w.a, &o, got, 4), 1);
    o.function = "ork";                          /* no partial names */
    assert_int_equal(pick(w.a, &o, got, 4), 0);
    o.function = NULL;
    o.file = "a.py";                             /* source order */
    assert_int_equal(pick(w.a, &o, got, 4), 2);
    assert_string_equal(got[0], "main");
    assert_string_equal(got[1], "work");
    o.file = "srv/a.py";
    assert_int_equal(pick(w.a, &o, got, 4), 2);
    o.file = "v/a.py";                           /* tails end at a '/' */
    assert_int_equal(pick(w.a, &o, got, 4), 0);
    world_close(&w);
}

/* The listed lines: lines_next from 0 until 0, into got. */
static size_t listing(const lines_agg *a, const lines_func *f, int all, uint32_t *got, size_t max)
{
    size_t n = 0;
    for (uint32_t l = lines_next(a, f, 0, all); l; l = lines_next(a, f, l, all)) {
        assert_true(n < max);
        got[n++] = l;
    }
    return n;
}

static void test_listing(void **state)
{
    world w;
    world_open(&w, 0);
    uint32_t got[16];
    const lines_func *wk = find(w.a, "work", NULL);
    assert_int_equal(listing(w.a, wk, 1, got, 16), 5); /* short: 8..12 whole */
    assert_int_equal(got[0], 8);
    assert_int_equal(got[4], 12);
    assert_int_equal(listing(w.a, wk, 0, got, 16), 3); /* no source: 10, 11, 12 */
    assert_int_equal(got[0], 10);
    world_close(&w);

    /* a long function: def line, the sampled lines with two lines around
     * each; a line number near 2^32 costs a few steps, not billions */
    conv_tb *b = conv_tb_new();
    uint32_t th = conv_tb_thread(b, 1, 1, "t");
    uint32_t f100 = conv_tb_frame(b, "f", "/x.py", 100, 1);
    uint32_t f103 = conv_tb_frame(b, "f", "/x.py", 103, 1);
    uint32_t fbig = conv_tb_frame(b, "f", "/x.py", 4000000000u, 1);
    conv_tb_sample(b, 0, th, conv_tb_stack(b, 1, &f100), ON, 0);
    conv_tb_sample(b, 1, th, conv_tb_stack(b, 1, &f103), ON, 0);
    conv_tb_sample(b, 2, th, conv_tb_stack(b, 1, &fbig), ON, 0);
    trc_reader *r = conv_tb_reader(b);
    assert_non_null(r);
    lines_agg *a = lines_agg_new();
    const trc_event *ev;
    while (trc_reader_next(r, &ev) == TRC_OK)
        if (ev->type == TRC_EV_SAMPLE)
            assert_int_equal(lines_agg_sample(a, &ev->u.sample), TRC_OK);
    assert_int_equal(lines_agg_finish(a, r), TRC_OK);
    const lines_func *f = find(a, "f", NULL);
    uint32_t want[] = {1, 98, 99, 100, 101, 102, 103, 104, 105,
                       3999999998u, 3999999999u, 4000000000u};
    assert_int_equal(listing(a, f, 1, got, 16), 12);
    assert_memory_equal(got, want, sizeof want);
    assert_int_equal(listing(a, f, 0, got, 16), 3);
    assert_int_equal(got[2], 4000000000u);
    lines_agg_free(a);
    trc_reader_free(r);
    conv_tb_free(b);
}

/* A source directory holding a.py, 11 lines long (work's line 12 is past
 * its end). */
static char *write_sources(void)
{
    char tmpl[] = "/tmp/test_lines.XXXXXX";
    char *dir = mkdtemp(tmpl);
    assert_non_null(dir);
    char path[256];
    snprintf(path, sizeof path, "%s/a.py", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (int i = 1; i <= 11; i++)
        fprintf(f, i == 10 ? "    x = \"h\xc3\xa9\"\t# ten\r\n" : "line %d\n", i);
    fclose(f);
    return strdup(dir);
}

static void remove_sources(char *dir)
{
    char path[256];
    snprintf(path, sizeof path, "%s/a.py", dir);
    unlink(path);
    rmdir(dir);
    free(dir);
}

static void test_source(void **state)
{
    char *dir = write_sources();
    char root[300];
    snprintf(root, sizeof root, "/srv=%s", dir);
    const char *roots[] = {"/sr=/nowhere", root};
    lines_source s;
    assert_int_equal(lines_source_load(&s, "/srv/a.py", roots, 2), 0);
    assert_non_null(s.text);
    assert_int_equal(s.n_lines, 11);
    assert_int_equal(s.len[9], strlen("    x = \"h\xc3\xa9\"\t# ten")); /* \r dropped */
    assert_memory_equal(s.line[0], "line 1", 6);
    lines_source_free(&s);
    assert_int_equal(lines_source_load(&s, "/srv/a.py", NULL, 0), 0);
    assert_null(s.text);
    assert_string_equal(s.error, "/srv/a.py: No such file or directory");
    /* a FIFO is refused without waiting for a writer */
    char fifo[300];
    snprintf(fifo, sizeof fifo, "%s/fifo.py", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    assert_int_equal(lines_source_load(&s, fifo, NULL, 0), 0);
    assert_null(s.text);
    assert_non_null(strstr(s.error, "not a regular file"));
    unlink(fifo);
    assert_int_equal(lines_source_load(&s, "<frozen abc>", NULL, 0), 0);
    assert_null(s.text);
    assert_non_null(strstr(s.error, "not a file"));
    remove_sources(dir);
}

static char *report(const lines_agg *a, const lines_opts *o)
{
    char *data = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&data, &len);
    assert_int_equal(o->json ? lines_write_json(a, o, f) : lines_write_text(a, o, f), TRC_OK);
    fclose(f);
    return data;
}

static void test_text(void **state)
{
    world w;
    world_open(&w, 1);
    char *dir = write_sources();
    char root[300];
    snprintf(root, sizeof root, "/srv=%s", dir);
    const char *roots[] = {root};
    lines_opts o = {0};
    o.function = "work";
    o.roots = roots;
    o.n_roots = 1;
    char *out = report(w.a, &o);
    const char *want =
        "work  /srv/a.py:8\n"
        "  on-CPU 0.011 s (91.7 % of the trace), own 0.010 s; on-CPU 0.011 s, wall 0.013 s; "
        "GPU launched 0.507 ms\n"
        "  callers: main (srv/a.py:1) 0.011 s 100.0 % gpu 0.507 ms\n"
        "  callees: helper (srv/b.py:20) 0.001 s 9.1 % gpu 0.007 ms\n"
        "   Line      CPU s    Wall s    Share    GPU ms  Source\n"
        "      8                                          line 8\n"
        "      9                                          line 9\n"
        "     10      0.008     0.008   72.7 %     0.500      x = \"h\xc3\xa9\"    # ten\n"
        "     11      0.003     0.005   27.3 %     0.007  line 11\n"
        "     12      0.001     0.001    9.1 %     0.000  [past the end: the file has 11 lines]\n";
    assert_non_null(strstr(out, want));
    assert_non_null(strstr(out, "15 samples: on-CPU 0.012 s, wall 0.015 s; 4 GPU activities"));
    free(out);

    /* missing source: the numbers stay, the reason is given, no empty lines */
    o.n_roots = 0;
    out = report(w.a, &o);
    assert_non_null(strstr(out, "  source not shown: /srv/a.py: No such file or directory\n"));
    assert_non_null(strstr(out, "     10      0.008     0.008   72.7 %     0.500  \n"));
    assert_null(strstr(out, "      9  "));
    free(out);

    /* colour only when asked */
    o.color = 1;
    out = report(w.a, &o);
    assert_non_null(strstr(out, "\033[1mwork\033[0m"));
    free(out);
    remove_sources(dir);
    world_close(&w);
}

static void test_json(void **state)
{
    world w;
    world_open(&w, 1);
    lines_opts o = {0};
    o.json = 1;
    char *out = report(w.a, &o);
    cJSON *j = cJSON_Parse(out);
    assert_non_null(j);
    assert_string_equal(cJSON_GetObjectItem(j, "metric")->valuestring, "cpu");
    assert_int_equal(cJSON_GetObjectItem(j, "samples")->valuedouble, 15);
    cJSON *fs = cJSON_GetObjectItem(j, "functions");
    assert_int_equal(cJSON_GetArraySize(fs), 3);
    cJSON *f = cJSON_GetArrayItem(fs, 0);
    assert_string_equal(cJSON_GetObjectItem(f, "function")->valuestring, "work");
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(f, "time"), "cpu_ns")->valuedouble,
                     11 * MS);
    cJSON *src = cJSON_GetObjectItem(f, "source");
    assert_string_equal(cJSON_GetObjectItem(src, "error")->valuestring,
                        "/srv/a.py: No such file or directory");
    cJSON *ls = cJSON_GetObjectItem(f, "lines");
    assert_int_equal(cJSON_GetArraySize(ls), 3); /* no source: only lines with samples */
    cJSON *l10 = cJSON_GetArrayItem(ls, 0);
    assert_int_equal(cJSON_GetObjectItem(l10, "line")->valuedouble, 10);
    assert_int_equal(cJSON_GetObjectItem(l10, "gpu_ns")->valuedouble, 500000);
    assert_true(cJSON_GetObjectItem(l10, "share")->valuedouble == 8.0 / 11.0);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(l10, "text")));
    cJSON *callers = cJSON_GetObjectItem(f, "callers");
    assert_string_equal(
        cJSON_GetObjectItem(cJSON_GetArrayItem(callers, 0), "function")->valuestring, "main");
    cJSON_Delete(j);
    free(out);
    world_close(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_functions_and_lines),
        cmocka_unit_test(test_pick),
        cmocka_unit_test(test_listing),
        cmocka_unit_test(test_source),
        cmocka_unit_test(test_text),
        cmocka_unit_test(test_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
