/*
 * test_stats.c — the per-function statistics behind trc-stats and
 * trc2pstats (lib/export/folded/stats.c) and the pstats encoder
 * (lib/export/folded/pstats.c): recursion counted once in cumtime, folded
 * samples weighted by their count, entries observed per thread, keys of
 * non-Python frames, allocation failures.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lib/util/alloc.h"
#include "lib/export/folded/folded.h"
#include "tests/support/folded_traces.h"

#define ON (TRC_SAMPLE_ON_CPU | TRC_SAMPLE_HOLDS_GIL | TRC_SAMPLE_GIL_KNOWN)
#define MS ((uint64_t)CONV_MS)

/* The reader stays open while its stats are used (strings are borrowed). */
static trc_reader *open_reader;

/* Reads every on-CPU sample of b into a finished exp_stats. */
static exp_stats *stats_of(conv_tb *b, uint64_t *max_count)
{
    assert_int_equal(conv_tb_status(b), TRC_OK);
    trc_reader *r = conv_tb_reader(b);
    assert_non_null(r);
    exp_stats *s = exp_stats_new();
    assert_non_null(s);
    const trc_event *ev;
    trc_status st;
    while ((st = trc_reader_next(r, &ev)) == TRC_OK) {
        if (ev->type != TRC_EV_SAMPLE || !(ev->u.sample.flags & TRC_SAMPLE_ON_CPU))
            continue;
        if (max_count && ev->u.sample.count > *max_count)
            *max_count = ev->u.sample.count;
        assert_int_equal(exp_stats_add(s, r, &ev->u.sample), TRC_OK);
    }
    assert_int_equal(st, TRC_ERR_EOF);
    assert_int_equal(exp_stats_finish(s, r), TRC_OK);
    open_reader = r;
    return s;
}

static void done(exp_stats *s, conv_tb *b)
{
    exp_stats_free(s);
    trc_reader_free(open_reader);
    open_reader = NULL;
    conv_tb_free(b);
}

static const exp_func *fn(const exp_stats *s, const char *name)
{
    for (size_t i = 0; i < exp_stats_func_count(s); i++) {
        if (strcmp(exp_stats_func(s, i)->function, name) == 0)
            return exp_stats_func(s, i);
    }
    fail_msg("no function %s", name);
    return NULL;
}

static const exp_edge *edge(const exp_stats *s, const char *caller, const char *callee)
{
    for (size_t i = 0; i < exp_stats_edge_count(s); i++) {
        const exp_edge *e = exp_stats_edge(s, i);
        if (strcmp(exp_stats_func(s, e->caller)->function, caller) == 0 &&
            strcmp(exp_stats_func(s, e->callee)->function, callee) == 0)
            return e;
    }
    fail_msg("no edge %s -> %s", caller, callee);
    return NULL;
}

static void test_recursion_counted_once(void **state)
{
    conv_tb *b = conv_tb_new();
    uint32_t th = conv_tb_thread(b, 1, 1, "main");
    uint32_t m = conv_tb_frame(b, "main", "a.py", 2, 1);
    uint32_t f = conv_tb_frame(b, "fib", "a.py", 11, 10);
    uint32_t st = conv_tb_stack(b, 4, (uint32_t[]){m, f, f, f});
    conv_tb_sample(b, 0, th, st, ON, 0);
    exp_stats *s = stats_of(b, NULL);

    const exp_func *fib = fn(s, "fib"), *mn = fn(s, "main");
    assert_int_equal(fib->tt_ns, MS);
    assert_int_equal(fib->ct_ns, MS); /* not 3 ms */
    assert_int_equal(fib->cum_samples, 1);
    assert_int_equal(fib->nc, 3);
    assert_int_equal(fib->cc, 1);
    assert_int_equal(mn->tt_ns, 0);
    assert_int_equal(mn->ct_ns, MS);
    assert_int_equal(mn->nc, 1);
    const exp_edge *self = edge(s, "fib", "fib");
    assert_int_equal(self->nc, 2);
    assert_int_equal(self->cc, 0);
    assert_int_equal(self->tt_ns, MS);
    assert_int_equal(self->ct_ns, MS); /* the pair occurs twice in the stack */
    const exp_edge *top = edge(s, "main", "fib");
    assert_int_equal(top->nc, 1);
    assert_int_equal(top->cc, 1);
    assert_int_equal(top->tt_ns, 0);
    assert_int_equal(top->ct_ns, MS);
    const exp_stats_totals *t = exp_stats_get_totals(s);
    assert_int_equal(t->samples, 1);
    assert_int_equal(t->weight_ns, MS);
    assert_int_equal(t->calls, 4);
    assert_int_equal(t->primitive_calls, 2);
    done(s, b);
}

static void test_folded_samples_weighted(void **state)
{
    conv_tb *b = conv_tb_new();
    uint32_t th = conv_tb_thread(b, 1, 1, "main");
    uint32_t m = conv_tb_frame(b, "main", "a.py", 2, 1);
    uint32_t g = conv_tb_frame(b, "g", "a.py", 21, 20);
    uint32_t sm = conv_tb_stack(b, 1, &m), sg = conv_tb_stack(b, 2, (uint32_t[]){m, g});
    for (int i = 0; i < 5; i++)
        conv_tb_sample(b, i, th, sg, ON, 0);
    conv_tb_sample(b, 5, th, sm, ON, 3 * MS);
    uint64_t max_count = 0;
    exp_stats *s = stats_of(b, &max_count);
    assert_int_equal(max_count, 5); /* the writer folded them into one event */
    assert_int_equal(fn(s, "g")->tt_ns, 5 * MS);
    assert_int_equal(fn(s, "g")->own_samples, 5);
    assert_int_equal(fn(s, "g")->nc, 1);
    assert_int_equal(fn(s, "main")->tt_ns, 3 * MS);
    assert_int_equal(fn(s, "main")->ct_ns, 8 * MS);
    assert_int_equal(fn(s, "main")->nc, 1);
    assert_int_equal(exp_stats_get_totals(s)->samples, 6);
    assert_int_equal(exp_stats_get_totals(s)->weight_ns, 8 * MS);
    done(s, b);
}

/* A call continues while its callers' frames are unchanged; its own line
 * may move.  A caller moving to another line ends the callee's call. */
static void test_entries_observed(void **state)
{
    conv_tb *b = conv_tb_new();
    uint32_t th = conv_tb_thread(b, 1, 1, "main");
    uint32_t m10 = conv_tb_frame(b, "main", "a.py", 10, 1);
    uint32_t m11 = conv_tb_frame(b, "main", "a.py", 11, 1);
    uint32_t f20 = conv_tb_frame(b, "f", "a.py", 20, 18);
    uint32_t f21 = conv_tb_frame(b, "f", "a.py", 21, 18);
    uint32_t a = conv_tb_stack(b, 2, (uint32_t[]){m10, f20});
    uint32_t c = conv_tb_stack(b, 2, (uint32_t[]){m10, f21});
    uint32_t d = conv_tb_stack(b, 2, (uint32_t[]){m11, f20});
    uint32_t e = conv_tb_stack(b, 1, &m11);
    conv_tb_sample(b, 0, th, a, ON, 0); /* main, f entered */
    conv_tb_sample(b, 1, th, c, ON, 0); /* f's line moved: same call */
    conv_tb_sample(b, 2, th, d, ON, 0); /* main moved on: a new f call */
    conv_tb_sample(b, 3, th, e, ON, 0); /* f returned */
    conv_tb_sample(b, 4, th, d, ON, 0); /* f called again */
    exp_stats *s = stats_of(b, NULL);
    assert_int_equal(fn(s, "main")->nc, 1);
    assert_int_equal(fn(s, "f")->nc, 3);
    assert_int_equal(fn(s, "f")->cc, 3);
    assert_int_equal(edge(s, "main", "f")->nc, 3);
    assert_int_equal(fn(s, "f")->tt_ns, 4 * MS);
    assert_int_equal(fn(s, "main")->ct_ns, 5 * MS);
    done(s, b);
}

/* main() > work() sampled on ticks 0..k-1, as trec records a thread
 * running that one call throughout. */
typedef struct one_call {
    conv_tb *b;
    uint32_t th, s_work, s_main, s_other;
} one_call;

static void one_call_new(one_call *c)
{
    c->b = conv_tb_new();
    c->th = conv_tb_thread(c->b, 1, 1, "main");
    uint32_t m = conv_tb_frame(c->b, "main", "a.py", 5, 1);
    uint32_t w = conv_tb_frame(c->b, "work", "a.py", 12, 10);
    uint32_t o = conv_tb_frame(c->b, "other", "a.py", 22, 20);
    c->s_work = conv_tb_stack(c->b, 2, (uint32_t[]){m, w});
    c->s_main = conv_tb_stack(c->b, 1, &m);
    c->s_other = conv_tb_stack(c->b, 1, &o);
}

/* Samples the recorder could not read are not in the trace: a LOSS
 * record counts them.  The call goes on across the gap. */
static void test_invalid_gap_no_new_call(void **state)
{
    one_call c;
    one_call_new(&c);
    for (int i = 0; i < 3; i++)
        conv_tb_sample(c.b, i, c.th, c.s_work, ON, 0);
    conv_tb_loss(c.b, TRC_LOSS_SAMPLES_INVALID, 4); /* ticks 3..6 unreadable */
    for (int i = 7; i < 10; i++)
        conv_tb_sample(c.b, i, c.th, c.s_work, ON, 0);
    conv_tb_loss(c.b, TRC_LOSS_SAMPLES_INVALID, 1);
    conv_tb_sample(c.b, 11, c.th, c.s_work, ON, 0);
    exp_stats *s = stats_of(c.b, NULL);
    assert_int_equal(fn(s, "main")->nc, 1);
    assert_int_equal(fn(s, "work")->nc, 1);
    assert_int_equal(edge(s, "main", "work")->nc, 1);
    assert_int_equal(fn(s, "work")->tt_ns, 7 * MS);
    done(s, c.b);
}

/* One sample without Python frames between two with the call on the
 * stack: a read at the wrong instant, not a return and a new call.  Its
 * time stays <no Python frames>'s. */
static void test_empty_sample_no_new_call(void **state)
{
    one_call c;
    one_call_new(&c);
    for (int i = 0; i < 20; i++) /* every 4th tick reads empty */
        conv_tb_sample(c.b, i, c.th, i % 4 == 3 ? 0 : c.s_work, ON, 0);
    exp_stats *s = stats_of(c.b, NULL);
    assert_int_equal(fn(s, "main")->nc, 1);
    assert_int_equal(fn(s, "main")->cc, 1);
    assert_int_equal(fn(s, "work")->nc, 1);
    assert_int_equal(edge(s, "main", "work")->nc, 1);
    const exp_func *np = fn(s, EXP_NO_PYTHON_FRAMES);
    assert_int_equal(np->nc, 5); /* each empty sample observed */
    assert_int_equal(np->tt_ns, 5 * MS);
    assert_int_equal(fn(s, "work")->tt_ns, 15 * MS);
    done(s, c.b);
}

/* Two empty samples in a row (the writer may fold them into one sample
 * of count 2: the same): the thread left Python, and what comes back is
 * a new call. */
static void test_empty_run_ends_calls(void **state)
{
    one_call c;
    one_call_new(&c);
    conv_tb_sample(c.b, 0, c.th, c.s_work, ON, 0);
    conv_tb_sample(c.b, 1, c.th, 0, ON, 0);
    conv_tb_sample(c.b, 2, c.th, 0, ON, 0);
    conv_tb_sample(c.b, 3, c.th, c.s_work, ON, 0);
    conv_tb_sample(c.b, 4, c.th, 0, ON, 0);
    conv_tb_sample(c.b, 5, c.th, 0, ON, 0);
    conv_tb_sample(c.b, 6, c.th, c.s_work, ON, 0);
    conv_tb_sample(c.b, 7, c.th, 0, ON, 0); /* one empty sample at the end */
    exp_stats *s = stats_of(c.b, NULL);
    assert_int_equal(fn(s, "main")->nc, 3);
    assert_int_equal(fn(s, "work")->nc, 3);
    assert_int_equal(fn(s, EXP_NO_PYTHON_FRAMES)->nc, 3);
    done(s, c.b);
}

/* Calls that really end still count apart: the function absent from a
 * valid sample with Python frames between two where it is present. */
static void test_repeated_calls_still_counted(void **state)
{
    one_call c;
    one_call_new(&c);
    for (int k = 0; k < 3; k++) {
        conv_tb_sample(c.b, 4 * k, c.th, c.s_work, ON, 0);
        conv_tb_sample(c.b, 4 * k + 1, c.th, c.s_work, ON, 0);
        conv_tb_sample(c.b, 4 * k + 2, c.th, c.s_main, ON, 0); /* work returned */
        conv_tb_sample(c.b, 4 * k + 3, c.th, 0, ON, 0); /* an empty one does not hide that */
    }
    /* main itself returns: another top-level function runs between */
    conv_tb_sample(c.b, 12, c.th, c.s_other, ON, 0);
    conv_tb_sample(c.b, 13, c.th, c.s_work, ON, 0);
    exp_stats *s = stats_of(c.b, NULL);
    assert_int_equal(fn(s, "work")->nc, 4);
    assert_int_equal(edge(s, "main", "work")->nc, 4);
    assert_int_equal(fn(s, "main")->nc, 2);
    assert_int_equal(fn(s, "other")->nc, 1);
    done(s, c.b);
}

static void test_threads_tracked_apart(void **state)
{
    conv_tb *b = conv_tb_new();
    uint32_t t1 = conv_tb_thread(b, 1, 1, "a"), t2 = conv_tb_thread(b, 1, 2, "b");
    uint32_t m = conv_tb_frame(b, "main", "a.py", 2, 1);
    uint32_t g = conv_tb_frame(b, "g", "a.py", 21, 20);
    uint32_t sg = conv_tb_stack(b, 2, (uint32_t[]){m, g}), sm = conv_tb_stack(b, 1, &m);
    for (int i = 0; i < 6; i++) {
        conv_tb_sample(b, i, t1, sg, ON, 0);
        conv_tb_sample(b, i + 0.5, t2, i < 3 ? sg : sm, ON, 0);
    }
    exp_stats *s = stats_of(b, NULL);
    assert_int_equal(fn(s, "g")->nc, 2); /* one call per thread */
    assert_int_equal(fn(s, "main")->nc, 2);
    assert_int_equal(fn(s, "g")->tt_ns, 9 * MS);
    const exp_stats_totals *t = exp_stats_get_totals(s);
    assert_int_equal(t->threads, 2);
    assert_int_equal(t->processes, 1);
    assert_int_equal(t->samples, 12);
    done(s, b);
}

static void test_keys_and_labels(void **state)
{
    conv_tb *b = conv_tb_new();
    uint32_t th = conv_tb_thread(b, 1, 1, "main");
    uint32_t m = conv_tb_frame(b, "main", "a.py", 2, 1);
    uint32_t n = conv_tb_native(b, "PyObject_Call");
    uint32_t lt = conv_tb_native(b, "<built-in method len>");
    conv_tb_sample(b, 0, th, conv_tb_stack(b, 2, (uint32_t[]){m, n}), ON, 0);
    conv_tb_sample(b, 1, th, conv_tb_stack(b, 2, (uint32_t[]){m, lt}), ON, 0);
    conv_tb_sample(b, 2, th, 0, ON, 0);
    exp_stats *s = stats_of(b, NULL);
    char buf[256];
    const exp_func *f = fn(s, "PyObject_Call");
    assert_string_equal(f->file, "~");
    assert_int_equal(f->first_line, 0);
    assert_string_equal(exp_func_label(f, buf, sizeof buf), "PyObject_Call");
    assert_string_equal(exp_func_label(fn(s, "<built-in method len>"), buf, sizeof buf),
                        "{built-in method len}");
    assert_string_equal(exp_func_label(fn(s, "main"), buf, sizeof buf), "a.py:1(main)");
    const exp_func *np = fn(s, EXP_NO_PYTHON_FRAMES);
    assert_int_equal(np->tt_ns, MS);
    assert_int_equal(np->nc, 1);
    /* every sample's time is some function's tottime */
    uint64_t tt = 0;
    for (size_t i = 0; i < exp_stats_func_count(s); i++)
        tt += exp_stats_func(s, i)->tt_ns;
    assert_int_equal(tt, exp_stats_get_totals(s)->weight_ns);
    /* functions come sorted by key */
    for (size_t i = 1; i < exp_stats_func_count(s); i++)
        assert_true(strcmp(exp_stats_func(s, i - 1)->file, exp_stats_func(s, i)->file) <= 0);
    done(s, b);
}

/* The marshal encoding of a one-function profile, byte for byte. */
static void test_pstats_encoding(void **state)
{
    conv_tb *b = conv_tb_new();
    uint32_t th = conv_tb_thread(b, 1, 1, "main");
    uint32_t m = conv_tb_frame(b, "m\xc3\xa9", "a.py", 2, 1);
    conv_tb_sample(b, 0, th, conv_tb_stack(b, 1, &m), ON, 500 * MS);
    exp_stats *s = stats_of(b, NULL);
    char *data = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&data, &len);
    assert_int_equal(exp_pstats_write(s, f), TRC_OK);
    fclose(f);
    static const unsigned char want[] = {
        '{', ')', 3, 'u', 4, 0, 0, 0, 'a', '.', 'p', 'y', 'i', 1, 0, 0, 0,
        'u', 3, 0, 0, 0, 'm', 0xc3, 0xa9, ')', 5, 'i', 1, 0, 0, 0, 'i', 1, 0, 0, 0,
        'g', 0, 0, 0, 0, 0, 0, 0xe0, 0x3f, 'g', 0, 0, 0, 0, 0, 0, 0xe0, 0x3f, '{', '0', '0'};
    assert_int_equal(len, sizeof want);
    assert_memory_equal(data, want, sizeof want);
    free(data);

    /* nothing to write: refused (pstats cannot load an empty dict) */
    exp_stats *empty = exp_stats_new();
    assert_int_equal(exp_stats_finish(empty, NULL), TRC_OK);
    f = open_memstream(&data, &len);
    assert_int_equal(exp_pstats_write(empty, f), TRC_ERR_ARG);
    fclose(f);
    free(data);
    exp_stats_free(empty);
    done(s, b);
}

/* Every allocation failure inside the exporter is reported as NOMEM and
 * leaks nothing (checked under ASan by `make asan`). */
static void test_allocation_failures(void **state)
{
    conv_tb *b = conv_tb_new();
    uint32_t th = conv_tb_thread(b, 1, 1, "main");
    uint32_t fr[8];
    for (int i = 0; i < 8; i++) {
        char name[16];
        snprintf(name, sizeof name, "f%d", i);
        fr[i] = conv_tb_frame(b, name, "a.py", (uint32_t)i + 1, (uint32_t)i + 1);
    }
    for (int i = 0; i < 40; i++)
        conv_tb_sample(b, i, th, conv_tb_stack(b, (size_t)(i % 8) + 1, fr), ON, 0);
    assert_int_equal(conv_tb_status(b), TRC_OK);
    int completed = 0;
    for (long n = 1; n < 10000 && !completed; n++) {
        trc_reader *r = conv_tb_reader(b);
        assert_non_null(r);
        const trc_event *ev;
        trc_status st;
        exp_stats *s = exp_stats_new();
        exp_collapsed *c = exp_collapsed_new(NULL);
        assert_non_null(s);
        assert_non_null(c);
        /* read all events first so only the exporters' allocations fail */
        trc_sample samples[64];
        size_t ns = 0;
        while ((st = trc_reader_next(r, &ev)) == TRC_OK && ns < 64) {
            if (ev->type == TRC_EV_SAMPLE)
                samples[ns++] = ev->u.sample;
        }
        trc_alloc_fail_after(n);
        trc_status got = TRC_OK;
        for (size_t i = 0; i < ns && got == TRC_OK; i++) {
            got = exp_stats_add(s, r, &samples[i]);
            if (got == TRC_OK)
                got = exp_collapsed_add(c, r, &samples[i]);
        }
        if (got == TRC_OK)
            got = exp_stats_finish(s, r);
        FILE *devnull = fopen("/dev/null", "w");
        if (got == TRC_OK)
            got = exp_collapsed_write(c, r, devnull);
        fclose(devnull);
        trc_alloc_fail_after(-1);
        assert_true(got == TRC_OK || got == TRC_ERR_NOMEM);
        completed = got == TRC_OK;
        exp_stats_free(s);
        exp_collapsed_free(c);
        trc_reader_free(r);
    }
    assert_true(completed);
    conv_tb_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_recursion_counted_once),
        cmocka_unit_test(test_folded_samples_weighted),
        cmocka_unit_test(test_entries_observed),
        cmocka_unit_test(test_invalid_gap_no_new_call),
        cmocka_unit_test(test_empty_sample_no_new_call),
        cmocka_unit_test(test_empty_run_ends_calls),
        cmocka_unit_test(test_repeated_calls_still_counted),
        cmocka_unit_test(test_threads_tracked_apart),
        cmocka_unit_test(test_keys_and_labels),
        cmocka_unit_test(test_pstats_encoding),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
