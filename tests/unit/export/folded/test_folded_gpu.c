/*
 * test_folded_gpu.c — GPU time in the aggregating exporters:
 * exp_collapsed_add_gpu (launching stack + leaf, the two roots, --threads
 * and --pids roots, escaping, microseconds apportioned so that lines sum
 * to the rounded total) and exp_stats_add_gpu (tottime/cumtime, ncalls as
 * activities, recursion, edges, totals, the pstats file).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lib/export/folded/folded.h"
#include "tests/support/folded_traces.h"

#define ON (TRC_SAMPLE_ON_CPU | TRC_SAMPLE_HOLDS_GIL | TRC_SAMPLE_GIL_KNOWN)

/* A reader over frames main(a.py) → step(a.py) → step (recursion) and
 * one thread; reader ids of the stacks [main], [main, step],
 * [main, step, step] and of the thread, learnt from samples. */
typedef struct world {
    conv_tb *b;
    trc_reader *r;
    uint32_t s1, s2, s3, thread;
} world;

static void world_open(world *w)
{
    w->b = conv_tb_new();
    uint32_t th = conv_tb_thread(w->b, 10, 11, "main");
    uint32_t fm = conv_tb_frame(w->b, "main", "/srv/a.py", 3, 1);
    uint32_t fs = conv_tb_frame(w->b, "step", "/srv/a.py", 9, 8);
    conv_tb_sample(w->b, 1, th, conv_tb_stack(w->b, 1, (uint32_t[]){fm}), ON, 0);
    conv_tb_sample(w->b, 2, th, conv_tb_stack(w->b, 2, (uint32_t[]){fm, fs}), ON, 0);
    conv_tb_sample(w->b, 3, th, conv_tb_stack(w->b, 3, (uint32_t[]){fm, fs, fs}), ON, 0);
    assert_int_equal(conv_tb_status(w->b), TRC_OK);
    w->r = conv_tb_reader(w->b);
    assert_non_null(w->r);
    uint32_t ids[3];
    int n = 0;
    const trc_event *ev;
    while (trc_reader_next(w->r, &ev) == TRC_OK) {
        if (ev->type == TRC_EV_SAMPLE) {
            ids[n++] = ev->u.sample.stack;
            w->thread = ev->u.sample.thread;
        }
    }
    assert_int_equal(n, 3);
    w->s1 = ids[0];
    w->s2 = ids[1];
    w->s3 = ids[2];
}

static void world_close(world *w)
{
    trc_reader_free(w->r);
    conv_tb_free(w->b);
}

static exp_gpu_hit hit(uint32_t thread, uint32_t stack, exp_gpu_origin o, uint32_t name_id,
                       const char *name, uint64_t ns)
{
    exp_gpu_hit h = {10, thread, stack, o, EXP_GPU_KERNEL, name_id, name, ns, 0, 0, 0};
    return h;
}

static char *write_collapsed(exp_collapsed *c, const trc_reader *r)
{
    char *data = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&data, &len);
    assert_int_equal(exp_collapsed_write(c, r, f), TRC_OK);
    fclose(f);
    return data;
}

static void test_collapsed_lines(void **state)
{
    world w;
    world_open(&w);
    exp_collapsed_options o = {0};
    o.weight_us = 1;
    exp_collapsed *c = exp_collapsed_new(&o);
    exp_gpu_hit hs[] = {
        hit(w.thread, w.s2, EXP_GPU_PYTHON, 1, "gemm", 300000),
        hit(w.thread, w.s2, EXP_GPU_PYTHON, 1, "gemm", 200000), /* same line */
        hit(w.thread, w.s3, EXP_GPU_PYTHON, 2, "a;b c", 5000),
        hit(w.thread, 0, EXP_GPU_NO_PYTHON, 3, "[CUDA memcpy HtoD]", 7000),
        hit(0, 0, EXP_GPU_UNKNOWN, 1, "gemm", 1000),
    };
    for (size_t i = 0; i < sizeof hs / sizeof hs[0]; i++)
        assert_int_equal(exp_collapsed_add_gpu(c, w.r, &hs[i]), TRC_OK);
    assert_int_equal(exp_collapsed_samples(c), 5);
    char *out = write_collapsed(c, w.r);
    assert_string_equal(out, "<no Python stack>;[CUDA memcpy HtoD] 7\n"
                             "<unknown launch>;gemm 1\n"
                             "main (srv/a.py:3);step (srv/a.py:9);gemm 500\n"
                             "main (srv/a.py:3);step (srv/a.py:9);step (srv/a.py:9);a%3Bb c 5\n");
    free(out);
    exp_collapsed_free(c);

    /* counts instead of time; roots for thread and process */
    o.weight_us = 0;
    o.threads = o.pids = 1;
    o.no_lines = 1;
    c = exp_collapsed_new(&o);
    for (size_t i = 0; i < sizeof hs / sizeof hs[0]; i++)
        assert_int_equal(exp_collapsed_add_gpu(c, w.r, &hs[i]), TRC_OK);
    out = write_collapsed(c, w.r);
    assert_string_equal(out, "process (pid 10);<unknown thread>;<unknown launch>;gemm 1\n"
                             "process (pid 10);main (tid 11);<no Python stack>;[CUDA memcpy HtoD] 1\n"
                             "process (pid 10);main (tid 11);main (srv/a.py);step (srv/a.py);gemm 2\n"
                             "process (pid 10);main (tid 11);main (srv/a.py);step (srv/a.py);"
                             "step (srv/a.py);a%3Bb c 1\n");
    free(out);
    exp_collapsed_free(c);
    world_close(&w);
}

/* Sum of the printed counts. */
static uint64_t sum_counts(const char *text, size_t *lines)
{
    uint64_t sum = 0;
    *lines = 0;
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        const char *sp = nl;
        while (sp > p && sp[-1] != ' ')
            sp--;
        sum += strtoull(sp, NULL, 10);
        (*lines)++;
        p = nl + 1;
    }
    return sum;
}

static void test_microseconds_sum_to_rounded_total(void **state)
{
    world w;
    world_open(&w);
    exp_collapsed_options o = {0};
    o.weight_us = 1;
    /* three lines of 0.6 us: 1.8 us in all → 2, to the first two (sorted) */
    exp_collapsed *c = exp_collapsed_new(&o);
    const char *names[] = {"k1", "k2", "k3"};
    for (uint32_t i = 0; i < 3; i++) {
        exp_gpu_hit h = hit(w.thread, w.s1, EXP_GPU_PYTHON, i + 1, names[i], 600);
        assert_int_equal(exp_collapsed_add_gpu(c, w.r, &h), TRC_OK);
    }
    char *out = write_collapsed(c, w.r);
    assert_string_equal(out, "main (srv/a.py:3);k1 1\nmain (srv/a.py:3);k2 1\n");
    free(out);
    exp_collapsed_free(c);

    /* pseudo-random durations: the sum is the rounded total, every line
     * within 1 us of its own time */
    uint64_t seed = 12345, total = 0;
    static char names2[400][16];
    uint64_t ns[400];
    c = exp_collapsed_new(&o);
    for (uint32_t i = 0; i < 400; i++) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        ns[i] = (seed >> 33) % 5000;
        total += ns[i];
        snprintf(names2[i], sizeof names2[i], "k%03u", i);
        exp_gpu_hit h = hit(w.thread, w.s1, EXP_GPU_PYTHON, i + 1, names2[i], ns[i]);
        assert_int_equal(exp_collapsed_add_gpu(c, w.r, &h), TRC_OK);
    }
    out = write_collapsed(c, w.r);
    size_t lines;
    assert_int_equal(sum_counts(out, &lines), (total + 500) / 1000);
    for (uint32_t i = 0; i < 400; i++) {
        char key[64];
        snprintf(key, sizeof key, ";k%03u ", i);
        const char *p = strstr(out, key);
        uint64_t v = p ? strtoull(p + strlen(key), NULL, 10) : 0;
        assert_true(v * 1000 + 1000 > ns[i] && v * 1000 < ns[i] + 1000);
    }
    free(out);
    exp_collapsed_free(c);
    world_close(&w);
}

static const exp_func *func(const exp_stats *s, const char *label)
{
    char buf[256];
    for (size_t i = 0; i < exp_stats_func_count(s); i++) {
        const exp_func *f = exp_stats_func(s, i);
        if (strcmp(exp_func_label(f, buf, sizeof buf), label) == 0)
            return f;
    }
    fail_msg("no function %s", label);
    return NULL;
}

static const exp_edge *edge(const exp_stats *s, const char *from, const char *to)
{
    const exp_func *a = func(s, from), *b = func(s, to);
    for (size_t i = 0; i < exp_stats_edge_count(s); i++) {
        const exp_edge *e = exp_stats_edge(s, i);
        if (exp_stats_func(s, e->caller) == a && exp_stats_func(s, e->callee) == b)
            return e;
    }
    return NULL;
}

static void test_stats(void **state)
{
    world w;
    world_open(&w);
    exp_stats *s = exp_stats_new();
    exp_gpu_hit hs[] = {
        hit(w.thread, w.s2, EXP_GPU_PYTHON, 1, "gemm", 300),
        hit(w.thread, w.s2, EXP_GPU_PYTHON, 1, "gemm", 200),
        hit(w.thread, w.s3, EXP_GPU_PYTHON, 1, "gemm", 50), /* under recursion */
        hit(w.thread, 0, EXP_GPU_NO_PYTHON, 2, "<bwd>", 40),
        hit(0, 0, EXP_GPU_UNKNOWN, 3, "[CUDA memset]", 10),
    };
    for (size_t i = 0; i < sizeof hs / sizeof hs[0]; i++)
        assert_int_equal(exp_stats_add_gpu(s, w.r, &hs[i]), TRC_OK);
    assert_int_equal(exp_stats_finish(s, w.r), TRC_OK);
    const exp_stats_totals *t = exp_stats_get_totals(s);
    assert_int_equal(t->gpu_activities, 5);
    assert_int_equal(t->gpu_ns, 600);
    assert_int_equal(t->weight_ns, 600);
    assert_int_equal(t->gpu_threads, 1);
    assert_int_equal(t->processes, 1);
    assert_int_equal(t->samples, 0);

    const exp_func *g = func(s, "gemm");
    assert_int_equal(g->tt_ns, 550);
    assert_int_equal(g->ct_ns, 550);
    assert_int_equal(g->nc, 3);
    assert_int_equal(g->cc, 3);
    const exp_func *m = func(s, "/srv/a.py:1(main)");
    assert_int_equal(m->tt_ns, 0);
    assert_int_equal(m->ct_ns, 550);
    assert_int_equal(m->nc, 3);
    const exp_func *st = func(s, "/srv/a.py:8(step)");
    assert_int_equal(st->ct_ns, 550); /* recursion counted once */
    assert_int_equal(st->nc, 4);      /* 1 + 1 + 2 (twice on the third path) */
    assert_int_equal(st->cc, 3);
    const exp_func *b = func(s, "{bwd}");
    assert_int_equal(b->tt_ns, 40);
    assert_int_equal(func(s, "{no Python stack}")->ct_ns, 40);
    assert_int_equal(func(s, "{unknown launch}")->ct_ns, 10);
    assert_int_equal(func(s, "[CUDA memset]")->tt_ns, 10);
    /* tottime sums to the GPU total */
    uint64_t tt = 0;
    for (size_t i = 0; i < exp_stats_func_count(s); i++)
        tt += exp_stats_func(s, i)->tt_ns;
    assert_int_equal(tt, 600);

    const exp_edge *e = edge(s, "/srv/a.py:8(step)", "gemm");
    assert_non_null(e);
    assert_int_equal(e->nc, 3);
    assert_int_equal(e->tt_ns, 550);
    e = edge(s, "/srv/a.py:8(step)", "/srv/a.py:8(step)");
    assert_non_null(e);
    assert_int_equal(e->nc, 1);
    assert_int_equal(e->cc, 0); /* a recursive call */
    assert_int_equal(e->ct_ns, 50);
    assert_null(edge(s, "{no Python stack}", "gemm"));

    /* the pstats file holds every function */
    char *data = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&data, &len);
    assert_int_equal(exp_pstats_write(s, f), TRC_OK);
    fclose(f);
    assert_true(len > 0 && data[0] == '{' && data[len - 1] == '0');
    assert_non_null(memmem(data, len, "[CUDA memset]", 13));
    free(data);
    assert_int_equal(exp_stats_add_gpu(s, w.r, &hs[0]), TRC_ERR_ARG); /* after finish */
    exp_stats_free(s);
    world_close(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_collapsed_lines),
        cmocka_unit_test(test_microseconds_sum_to_rounded_total),
        cmocka_unit_test(test_stats),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
