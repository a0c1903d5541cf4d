/*
 * test_select.c — the converters' shared selections
 * (tools/common/select.c over the pipeline stage lib/export/pipeline/select.c)
 * and loss accounting (lib/export/pipeline/losses.c):
 * on-CPU default, --idle, --gil, --thread by name, pattern and tid (and
 * renames), --pid by id and name, --from/--to clipping folded samples,
 * the line for a selection that matches nothing, the loss summary line.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/support/folded_traces.h"
#include "tools/common/convert.h"
#include "lib/procname.h"

#define ON (TRC_SAMPLE_ON_CPU | TRC_SAMPLE_HOLDS_GIL | TRC_SAMPLE_GIL_KNOWN)
#define ON_NOGIL (TRC_SAMPLE_ON_CPU | TRC_SAMPLE_GIL_KNOWN)
#define IDLE TRC_SAMPLE_GIL_KNOWN

typedef struct kept {
    uint64_t samples, events;
    uint64_t per_tid[4]; /* tids 1..3 */
    int64_t first_ns, last_ns;
    int unmatched;          /* conv_selection_unmatched after reading */
    char why[512];
} kept;

static void run(conv_tb *b, conv_selection *sel, kept *k)
{
    memset(k, 0, sizeof *k);
    conv_selection_prepare(sel);
    trc_reader *r = conv_tb_reader(b);
    assert_non_null(r);
    const trc_event *ev;
    trc_event scratch;
    while (trc_reader_next(r, &ev) == TRC_OK) {
        const trc_event *e = conv_selection_filter(sel, r, ev, &scratch);
        assert_int_equal(conv_selection_keep(sel, r, ev), e != NULL);
        if (!e || e->type != TRC_EV_SAMPLE)
            continue;
        const trc_sample *s = &e->u.sample;
        if (!k->events)
            k->first_ns = s->time_ns;
        k->last_ns = s->time_ns + (int64_t)s->span_ns;
        k->events++;
        k->samples += s->count;
        const trc_thread *t = trc_reader_thread(r, s->thread);
        assert_non_null(t);
        if (t->tid >= 1 && t->tid <= 3)
            k->per_tid[t->tid] += s->count;
    }
    k->unmatched = conv_selection_unmatched(sel, r, k->why, sizeof k->why);
    trc_reader_free(r);
    conv_selection_cleanup(sel);
}

/* Sets a selection list (conv_selection_cleanup frees the array). */
static void set_list(cli_list *l, const char *a, const char *b)
{
    l->items = calloc(2, sizeof *l->items);
    assert_non_null(l->items);
    l->items[0] = a;
    l->items[1] = b;
    l->n = b ? 2 : 1;
    l->cap = 2;
}

/* Threads: tid 1 "main" (pid 10), tid 2 "io" (pid 10, renamed "net"
 * after 5 ms), tid 3 "other" (pid 20). */
static conv_tb *three_threads(void)
{
    conv_tb *b = conv_tb_new();
    uint32_t t1 = conv_tb_thread(b, 10, 1, "main");
    uint32_t t2 = conv_tb_thread(b, 10, 2, "io");
    uint32_t t3 = conv_tb_thread(b, 20, 3, "other");
    uint32_t f = conv_tb_frame(b, "f", "a.py", 1, 1);
    uint32_t s = conv_tb_stack(b, 1, &f);
    for (int i = 0; i < 10; i++) {
        if (i == 5) {
            /* flush first: pending folded runs belong to the old name */
            assert_int_equal(trc_writer_flush(conv_tb_writer(b)), TRC_OK);
            conv_tb_thread(b, 10, 2, "net");
        }
        conv_tb_sample(b, i, t1, s, i < 8 ? ON : IDLE, 0);
        conv_tb_sample(b, i + 0.1, t2, s, i % 2 ? ON_NOGIL : ON, 0);
        conv_tb_sample(b, i + 0.2, t3, s, ON, 0);
    }
    assert_int_equal(conv_tb_status(b), TRC_OK);
    return b;
}

static void test_cpu_idle_gil(void **state)
{
    conv_tb *b = three_threads();
    conv_selection sel;
    kept k;
    memset(&sel, 0, sizeof sel);
    run(b, &sel, &k);
    assert_int_equal(k.samples, 28); /* 2 idle samples of main left out */
    assert_int_equal(k.per_tid[1], 8);

    memset(&sel, 0, sizeof sel);
    sel.idle = 1;
    run(b, &sel, &k);
    assert_int_equal(k.samples, 30);

    memset(&sel, 0, sizeof sel);
    sel.gil = 1;
    run(b, &sel, &k);
    assert_int_equal(k.per_tid[1], 8);
    assert_int_equal(k.per_tid[2], 5);
    assert_int_equal(k.per_tid[3], 10);
    conv_tb_free(b);
}

static void test_threads_and_pids(void **state)
{
    conv_tb *b = three_threads();
    conv_selection sel;
    kept k;

    memset(&sel, 0, sizeof sel);
    set_list(&sel.threads, "main", NULL);
    run(b, &sel, &k);
    assert_int_equal(k.samples, 8);
    assert_int_equal(k.per_tid[1], 8);

    memset(&sel, 0, sizeof sel);
    set_list(&sel.threads, "3", NULL); /* by tid */
    run(b, &sel, &k);
    assert_int_equal(k.per_tid[3], 10);
    assert_int_equal(k.samples, 10);

    memset(&sel, 0, sizeof sel);
    set_list(&sel.threads, "io", NULL); /* the name it had for its first 5 samples */
    run(b, &sel, &k);
    assert_int_equal(k.per_tid[2], 5);
    assert_int_equal(k.samples, 5);

    memset(&sel, 0, sizeof sel);
    set_list(&sel.pids, "10", NULL);
    run(b, &sel, &k);
    assert_int_equal(k.samples, 18);
    assert_int_equal(k.per_tid[3], 0);

    memset(&sel, 0, sizeof sel);
    set_list(&sel.pids, "10", "20");
    run(b, &sel, &k);
    assert_int_equal(k.samples, 28);
    conv_tb_free(b);
}

/* A folded run of 10 samples at 0..9 ms, window [2.5 ms, 6 ms): the
 * samples at 3, 4 and 5 ms are kept, as one clipped event. */
static void test_time_window_clips_runs(void **state)
{
    conv_tb *b = conv_tb_new();
    uint32_t t = conv_tb_thread(b, 1, 1, "main");
    uint32_t f = conv_tb_frame(b, "f", "a.py", 1, 1);
    uint32_t s = conv_tb_stack(b, 1, &f);
    for (int i = 0; i < 10; i++)
        conv_tb_sample(b, i, t, s, ON, 0);
    assert_int_equal(conv_tb_status(b), TRC_OK);
    conv_selection sel;
    kept k;

    memset(&sel, 0, sizeof sel);
    sel.from = "0.0025";
    sel.to = "0.006";
    run(b, &sel, &k);
    assert_int_equal(k.events, 1);
    assert_int_equal(k.samples, 3);
    assert_int_equal(k.first_ns, CONV_START_NS + 3 * CONV_MS);
    assert_int_equal(k.last_ns, CONV_START_NS + 5 * CONV_MS);

    memset(&sel, 0, sizeof sel);
    sel.from = "0.009"; /* the last sample only */
    run(b, &sel, &k);
    assert_int_equal(k.samples, 1);
    assert_int_equal(k.first_ns, CONV_START_NS + 9 * CONV_MS);

    memset(&sel, 0, sizeof sel);
    sel.to = "0.0000001"; /* the first sample only */
    run(b, &sel, &k);
    assert_int_equal(k.samples, 1);

    memset(&sel, 0, sizeof sel);
    sel.from = "0.0091";
    run(b, &sel, &k);
    assert_int_equal(k.samples, 0);
    conv_tb_free(b);
}

static void test_loss_summary(void **state)
{
    conv_losses l;
    char buf[512];
    conv_losses_reset(&l);
    assert_false(conv_losses_warns(&l, 1));
    conv_losses_describe(&l, buf, sizeof buf);
    assert_string_equal(buf, "");

    /* a few late and missed ticks among many samples: facts, not a warning */
    trc_event seg = {.type = TRC_EV_SEGMENT};
    trc_event sample = {.type = TRC_EV_SAMPLE};
    trc_event end = {.type = TRC_EV_SEGMENT_END};
    sample.u.sample.count = 1000;
    conv_losses_event(&l, &seg);
    conv_losses_event(&l, &sample);
    trc_loss late = {TRC_LOSS_SAMPLES_LATE, 9, -1, 0, 0, 0, 0, "", 0};
    trc_loss missed = {TRC_LOSS_SAMPLES_MISSED, 20, -1, 0, 0, 0, 0, "", 0};
    conv_losses_add(&l, &late);
    conv_losses_add(&l, &missed);
    conv_losses_event(&l, &end);
    conv_losses_end(&l);
    assert_false(conv_losses_warns(&l, 0));
    assert_true(conv_losses_warns(&l, 1)); /* --strict: any recorded loss */
    conv_losses_describe(&l, buf, sizeof buf);
    assert_string_equal(buf, "20 samples missed by the recorder, 9 samples taken late "
                             "(2.8 % of 1020 ticks)");

    /* over the limit: 29 + 25 of 1045 ticks */
    trc_loss invalid = {TRC_LOSS_SAMPLES_INVALID, 25, -1, 0, 0, 0, 0, "", 0};
    conv_losses_add(&l, &invalid);
    assert_true(conv_losses_warns(&l, 0));
    assert_false(conv_losses_damaged(&l));
    conv_losses_describe(&l, buf, sizeof buf);
    assert_string_equal(buf, "20 samples missed by the recorder, 25 invalid samples dropped, "
                             "9 samples taken late (5.2 % of 1045 ticks, over the 5 % limit)");

    /* damage, and a recording that ends without its end record */
    conv_losses_reset(&l);
    conv_losses_event(&l, &seg);
    conv_losses_event(&l, &sample);
    conv_losses_end(&l);
    assert_true(conv_losses_warns(&l, 0));
    assert_false(conv_losses_damaged(&l));
    conv_losses_describe(&l, buf, sizeof buf);
    assert_string_equal(buf, "the recording ends without its end record (the recorder was "
                             "killed or its output cut)");

    conv_losses_reset(&l);
    trc_loss crc = {TRC_LOSS_CHUNK_DAMAGED, 1, -1, 0, 0, 0, 0x1a3, "bad CRC", 1};
    trc_loss crc2 = {TRC_LOSS_CHUNK_DAMAGED, 1, -1, 0, 0, 0, 0x4000, "bad CRC", 1};
    trc_loss trunc = {TRC_LOSS_TRUNCATED, 77, -1, 0, 0, 0, 0x5000, "", 1};
    conv_losses_event(&l, &seg);
    conv_losses_add(&l, &missed);
    conv_losses_add(&l, &crc);
    conv_losses_add(&l, &crc2);
    conv_losses_add(&l, &trunc);
    conv_losses_end(&l); /* no end record, but the damage says why: not blamed twice */
    assert_true(conv_losses_warns(&l, 0));
    assert_true(conv_losses_damaged(&l));
    assert_int_equal(l.events, 4);
    conv_losses_describe(&l, buf, sizeof buf);
    assert_string_equal(buf, "2 damaged chunks skipped, input truncated, first damage at offset "
                             "0x1a3, 20 samples missed by the recorder (100.0 % of 20 ticks)");
    /* a loss of another kind the recorder wrote: always worth the warning,
     * but not damage */
    conv_losses_reset(&l);
    trc_loss refused = {TRC_LOSS_OTHER, 0, -1, 0, 0, 0, 0, "GPU recording refused", 0};
    conv_losses_add(&l, &refused);
    assert_true(conv_losses_warns(&l, 0));
    assert_false(conv_losses_damaged(&l));
    conv_losses_describe(&l, buf, sizeof buf);
    assert_string_equal(buf, "GPU recording refused");

    /* a short buffer is cut, still terminated */
    conv_losses_describe(&l, buf, 10);
    assert_int_equal(strlen(buf), 9);
}

static void test_loss_rule(void **state)
{
    /* the limit: over 5 % of the ticks, not at it */
    assert_false(lossrule_sampling_over(950, 50, 0, 0)); /* 5.0 % */
    assert_true(lossrule_sampling_over(949, 51, 0, 0));  /* 5.1 % */
    assert_true(lossrule_sampling_over(1000, 0, 0, 60)); /* late ones count too */
    assert_true(lossrule_sampling_over(1000, 0, 60, 0));
    /* too short a run to mean anything; nothing read (not Python) */
    assert_false(lossrule_sampling_over(50, 49, 0, 0));
    assert_false(lossrule_sampling_over(0, 500, 0, 0));
    assert_true(lossrule_sampling_over(0, 0, 500, 0)); /* every stack torn */
    assert_int_equal(lossrule_ticks(10, 2, 3), 15);
    assert_true(lossrule_percent(0, 0, 0, 0) == 0.0);
    /* hostile counts: saturate, stay a percentage */
    assert_int_equal(lossrule_ticks(UINT64_MAX, 1, 1), UINT64_MAX);
    assert_true(lossrule_percent(1, 0, 0, UINT64_MAX) == 100.0);

    /* GPU records dropped always warn */
    lossrule_tally t = {0};
    t.samples = 1000;
    assert_false(lossrule_warns(&t, 1));
    t.gpu_dropped = 1;
    assert_true(lossrule_warns(&t, 0));
}

/* Three processes, by what they ran: 10 a script with options before
 * it, 20 a module, 30 code given with -c.  Threads: tids 1 "Thread-1
 * (w)" and 2 "Thread-2 (w)" of pid 10, tid 3 "Other" of pid 20. */
static conv_tb *named_processes(void)
{
    conv_tb *b = conv_tb_new();
    trc_process p10 = {0, 10, 1, "/usr/bin/python3.11", "CPython 3.11",
                       "python3 -u -W ignore /srv/app/train.py --lr 1", 0, -1, "", ""};
    trc_process p20 = {0, 20, 1, "/usr/bin/python3", "CPython 3.11", "python3 -m pkg.serve", 0, -1, "", ""};
    trc_process p30 = {0, 30, 1, "/usr/bin/python3", "CPython 3.11", "python3 -c import x", 0, -1, "", ""};
    assert_int_equal(trc_writer_process(conv_tb_writer(b), &p10), TRC_OK);
    assert_int_equal(trc_writer_process(conv_tb_writer(b), &p20), TRC_OK);
    assert_int_equal(trc_writer_process(conv_tb_writer(b), &p30), TRC_OK);
    uint32_t t1 = conv_tb_thread(b, 10, 1, "Thread-1 (w)");
    uint32_t t2 = conv_tb_thread(b, 10, 2, "Thread-2 (w)");
    uint32_t t3 = conv_tb_thread(b, 20, 3, "Other");
    uint32_t f = conv_tb_frame(b, "f", "a.py", 1, 1);
    uint32_t s = conv_tb_stack(b, 1, &f);
    for (int i = 0; i < 4; i++) {
        conv_tb_sample(b, i, t1, s, ON, 0);
        conv_tb_sample(b, i + 0.1, t2, s, ON, 0);
        conv_tb_sample(b, i + 0.2, t3, s, ON, 0);
    }
    assert_int_equal(conv_tb_status(b), TRC_OK);
    return b;
}

static void test_patterns(void **state)
{
    conv_tb *b = named_processes();
    conv_selection sel;
    kept k;

    memset(&sel, 0, sizeof sel);
    set_list(&sel.threads, "Thread-*", NULL);
    run(b, &sel, &k);
    assert_int_equal(k.per_tid[1], 4);
    assert_int_equal(k.per_tid[2], 4);
    assert_int_equal(k.samples, 8);
    assert_false(k.unmatched);

    memset(&sel, 0, sizeof sel);
    set_list(&sel.threads, "Thread-2 (w)", "3"); /* an exact name and a tid */
    run(b, &sel, &k);
    assert_int_equal(k.per_tid[2], 4);
    assert_int_equal(k.per_tid[3], 4);
    assert_int_equal(k.samples, 8);

    memset(&sel, 0, sizeof sel);
    set_list(&sel.threads, "Thread-[1]*", NULL);
    run(b, &sel, &k);
    assert_int_equal(k.samples, 4);
    assert_int_equal(k.per_tid[1], 4);

    /* --pid by name: the script's basename, the module, the executable */
    memset(&sel, 0, sizeof sel);
    set_list(&sel.pids, "train.py", NULL);
    run(b, &sel, &k);
    assert_int_equal(k.samples, 8);
    assert_int_equal(k.per_tid[3], 0);

    memset(&sel, 0, sizeof sel);
    set_list(&sel.pids, "pkg.*", NULL);
    run(b, &sel, &k);
    assert_int_equal(k.samples, 4);
    assert_int_equal(k.per_tid[3], 4);

    memset(&sel, 0, sizeof sel);
    set_list(&sel.pids, "python3.1?", NULL); /* pid 10's executable only */
    run(b, &sel, &k);
    assert_int_equal(k.samples, 8);
    assert_int_equal(k.per_tid[3], 0);

    memset(&sel, 0, sizeof sel);
    set_list(&sel.pids, "tr*", "20"); /* a name and an id */
    run(b, &sel, &k);
    assert_int_equal(k.samples, 12);

    memset(&sel, 0, sizeof sel);
    set_list(&sel.pids, "train.py", NULL);
    set_list(&sel.threads, "Thread-1*", NULL);
    run(b, &sel, &k);
    assert_int_equal(k.samples, 4);
    assert_int_equal(k.per_tid[1], 4);
    conv_tb_free(b);
}

static void test_process_names(void **state)
{
    static const struct {
        const char *cmd, *script;
    } cases[] = {
        {"python3 app.py", "app.py"},
        {"/usr/bin/python3 -u -X dev -W ignore ../src/app.py -v", "app.py"},
        {"python3 -OO -- run.py", "run.py"},
        {"python3 -Wignore x.py", "x.py"},
        {"python3 -m http.server 8000", "http.server"},
        {"python3 -mtimeit 1", "timeit"},
        {"python3 -c print(1)", NULL},
        {"python3 - < x", NULL},
        {"python3", NULL},
        {"", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        trc_process p = {0, 1, 0, "/opt/py/bin/python3.12", "", cases[i].cmd, 0, -1, "", ""};
        char names[CONV_PROCESS_NAMES][128];
        int n = conv_process_names(&p, names);
        assert_string_equal(names[0], "python3.12");
        int k = 1;
        if (cases[i].script) {
            assert_true(n >= 2);
            assert_string_equal(names[k++], cases[i].script);
        }
        /* then the display name, unless it repeats the name before it */
        char shown[128];
        procname_base(&p, shown, sizeof shown);
        if (strcmp(shown, names[k - 1]) != 0)
            assert_string_equal(names[k++], shown);
        assert_int_equal(n, k);
    }
    trc_process none = {0, 1, 0, "", "", NULL, 0, -1, "", ""};
    char names[CONV_PROCESS_NAMES][128];
    assert_int_equal(conv_process_names(&none, names), 0);
}

/* A selection that matches nothing says so, naming what the trace has. */
static void test_unmatched(void **state)
{
    conv_tb *b = named_processes();
    conv_selection sel;
    kept k;

    memset(&sel, 0, sizeof sel);
    set_list(&sel.threads, "Nope*", NULL);
    run(b, &sel, &k);
    assert_int_equal(k.samples, 0);
    assert_true(k.unmatched);
    assert_string_equal(k.why, "--thread 'Nope*' matches no thread "
                               "(threads: Thread-1 (w), Thread-2 (w), Other)");

    memset(&sel, 0, sizeof sel);
    set_list(&sel.pids, "serve*", "99");
    run(b, &sel, &k);
    assert_true(k.unmatched);
    assert_string_equal(k.why, "--pid 'serve*' --pid '99' match no process "
                               "(processes: 10 (python3.11, train.py), 20 (python3, pkg.serve))");

    /* each matches something, together nothing */
    memset(&sel, 0, sizeof sel);
    set_list(&sel.pids, "20", NULL);
    set_list(&sel.threads, "Thread-*", NULL);
    run(b, &sel, &k);
    assert_true(k.unmatched);
    assert_string_equal(k.why, "--pid '20' --thread 'Thread-*' match no thread "
                               "(threads of the selected processes: Other)");

    /* a thread that matches but has no selected samples is a match */
    memset(&sel, 0, sizeof sel);
    set_list(&sel.threads, "Other", NULL);
    sel.from = "1";
    run(b, &sel, &k);
    assert_int_equal(k.samples, 0);
    assert_false(k.unmatched);
    assert_string_equal(k.why, "");

    memset(&sel, 0, sizeof sel);
    run(b, &sel, &k);
    assert_false(k.unmatched);
    conv_tb_free(b);

    /* many threads: a pool's name once, the list cut short with a count */
    b = conv_tb_new();
    for (int i = 0; i < 8; i++)
        conv_tb_thread(b, 5, 100 + i, "pool");
    for (int i = 0; i < 100; i++) {
        char name[32];
        snprintf(name, sizeof name, "worker-%02d", i);
        conv_tb_thread(b, 5, 200 + i, name);
    }
    conv_tb_thread(b, 5, 400, "");
    assert_int_equal(conv_tb_status(b), TRC_OK);
    memset(&sel, 0, sizeof sel);
    set_list(&sel.threads, "x", NULL);
    run(b, &sel, &k);
    assert_true(k.unmatched);
    const char *head = "--thread 'x' matches no thread (threads: pool, worker-00, worker-01, ";
    assert_memory_equal(k.why, head, strlen(head));
    assert_null(strstr(k.why, "pool, pool"));
    assert_true(strlen(k.why) < 300);
    const char *more = strstr(k.why, ", ... ");
    assert_non_null(more);
    unsigned shown = 0, rest = 0;
    for (const char *q = strstr(k.why, "worker-"); q; q = strstr(q + 1, "worker-"))
        shown++;
    assert_int_equal(sscanf(more, ", ... %u more)", &rest), 1);
    assert_int_equal(shown + rest, 100 + 1); /* the unnamed thread is among the rest */
    conv_tb_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpu_idle_gil),
        cmocka_unit_test(test_threads_and_pids),
        cmocka_unit_test(test_time_window_clips_runs),
        cmocka_unit_test(test_loss_summary),
        cmocka_unit_test(test_loss_rule),
        cmocka_unit_test(test_patterns),
        cmocka_unit_test(test_process_names),
        cmocka_unit_test(test_unmatched),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
