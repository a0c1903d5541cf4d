/*
 * test_rec_dump_groups.c — `trec --dump` of a process tree groups
 * identical stacks across processes (lib/rec/dump_groups.c) and prints
 * them (lib/rec/dump_text.c, dump_json.c): frames are compared by
 * content, not pointer (each process has its own reader); a stack
 * differing in one line is another group; each pid is listed once
 * however many of its threads share the stack; threads without frames
 * or without a thread state are in no group; groups come most pids
 * first, then by lowest pid; the text writes consecutive pids as a
 * range, the JSON lists them all.  Also: stopped and zombie threads
 * say so; a free-threaded process without its GIL says so.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "lib/rec/dump.h"

#include <stdio.h>
#include <stdlib.h>

/* Frames of the processes: the same content at different addresses,
 * as two readers would hold them. */
static py_frame_info main_a = {"main", "train.py", 30, 1, 0};
static py_frame_info main_b = {"main", "train.py", 30, 1, 0};
static py_frame_info reduce_a = {"allreduce", "/opt/dist/comm.py", 120, 100, 0};
static py_frame_info reduce_b = {"allreduce", "/opt/dist/comm.py", 120, 100, 0};
static py_frame_info reduce_other_line = {"allreduce", "/opt/dist/comm.py", 121, 100, 0};
static py_frame_info next_a = {"__next__", "data.py", 55, 50, 0};

static const py_frame_info *st_reduce_a[] = {&reduce_a, &main_a};
static const py_frame_info *st_reduce_b[] = {&reduce_b, &main_b};
static const py_frame_info *st_reduce_121[] = {&reduce_other_line, &main_a};
static const py_frame_info *st_next[] = {&next_a, &main_b};

static rec_dump_thread thread_with(const py_frame_info **frames, int depth)
{
    rec_dump_thread d;
    memset(&d, 0, sizeof d);
    d.python = 1;
    d.holds_gil = 0;
    d.depth = depth;
    d.frames = frames;
    return d;
}

/* pids 101..106: 101-104 and 106 in allreduce (104 with two threads),
 * 105 in __next__, 107 in allreduce one line further, plus threads
 * that belong to no group. */
typedef struct tree {
    rec_dump_thread t[10];
    rec_dump_proc p[7];
} tree;

static void make_tree(tree *tr)
{
    memset(tr, 0, sizeof *tr);
    pid_t pids[] = {104, 101, 102, 103, 105, 106, 107};
    for (int i = 0; i < 7; i++) {
        tr->p[i].pid = pids[i];
        tr->p[i].command = "python3 train.py";
        tr->p[i].version = "3.12.1";
    }
    /* 104: two threads in allreduce and one without a thread state */
    tr->t[0] = thread_with(st_reduce_a, 2);
    tr->t[1] = thread_with(st_reduce_b, 2);
    tr->t[2] = thread_with(NULL, 0);
    tr->t[2].python = 0;
    tr->p[0].threads = &tr->t[0];
    tr->p[0].n_threads = 3;
    tr->t[3] = thread_with(st_reduce_b, 2);
    tr->p[1].threads = &tr->t[3];
    tr->p[1].n_threads = 1;
    tr->t[4] = thread_with(st_reduce_a, 2);
    tr->p[2].threads = &tr->t[4];
    tr->p[2].n_threads = 1;
    /* 103: allreduce, and a thread idle in C (no frames) */
    tr->t[5] = thread_with(st_reduce_b, 2);
    tr->t[6] = thread_with(NULL, 0);
    tr->p[3].threads = &tr->t[5];
    tr->p[3].n_threads = 2;
    tr->t[7] = thread_with(st_next, 2);
    tr->p[4].threads = &tr->t[7];
    tr->p[4].n_threads = 1;
    tr->t[8] = thread_with(st_reduce_a, 2);
    tr->p[5].threads = &tr->t[8];
    tr->p[5].n_threads = 1;
    tr->t[9] = thread_with(st_reduce_121, 2);
    tr->p[6].threads = &tr->t[9];
    tr->p[6].n_threads = 1;
}

static void test_groups(void **state)
{
    tree tr;
    make_tree(&tr);
    rec_dump_groups g;
    assert_int_equal(rec_dump_group_stacks(tr.p, 7, &g), 0);
    assert_int_equal(g.n, 3);
    /* allreduce at line 120: pids 101-104 and 106, six threads */
    assert_int_equal(g.v[0].n_pids, 5);
    pid_t want0[] = {101, 102, 103, 104, 106};
    for (int i = 0; i < 5; i++)
        assert_int_equal(g.v[0].pids[i], want0[i]);
    assert_int_equal(g.v[0].n_threads, 6);
    assert_string_equal(g.v[0].stack->frames[0]->function, "allreduce");
    assert_int_equal(g.v[0].stack->frames[0]->line, 120);
    /* then the single ones by pid: 105 (__next__), 107 (line 121) */
    assert_int_equal(g.v[1].n_pids, 1);
    assert_int_equal(g.v[1].pids[0], 105);
    assert_string_equal(g.v[1].stack->frames[0]->function, "__next__");
    assert_int_equal(g.v[2].n_pids, 1);
    assert_int_equal(g.v[2].pids[0], 107);
    assert_int_equal(g.v[2].stack->frames[0]->line, 121);
    rec_dump_groups_free(&g);
    assert_int_equal(g.n, 0);
}

static char *print_text(const rec_dump_proc *p, int n, const rec_dump_groups *g)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    rec_dump_text(f, p, n, g);
    fclose(f);
    return buf;
}

static void test_text(void **state)
{
    tree tr;
    make_tree(&tr);
    tr.t[7].state = REC_DUMP_ZOMBIE;
    tr.t[7].tid = 105;
    tr.t[8].state = REC_DUMP_STOPPED;
    tr.t[8].tid = 106;
    rec_dump_groups g;
    assert_int_equal(rec_dump_group_stacks(tr.p, 7, &g), 0);
    char *out = print_text(tr.p, 7, &g);
    assert_non_null(strstr(out, "Thread 105 \"\" (zombie)\n"));
    assert_non_null(strstr(out, "Thread 106 \"\" (stopped)\n"));
    const char *want =
        "\nIdentical stacks (innermost frame first):\n"
        "  pids 101\xe2\x80\x93" "104, 106 (6 threads): allreduce at comm.py:120 \xe2\x86\x90 "
        "main at train.py:30\n"
        "  pid 105: __next__ at data.py:55 \xe2\x86\x90 main at train.py:30\n"
        "  pid 107: allreduce at comm.py:121 \xe2\x86\x90 main at train.py:30\n";
    const char *section = strstr(out, "\nIdentical stacks");
    assert_non_null(section);
    assert_string_equal(section, want);
    /* the thread without a thread state says so */
    assert_non_null(strstr(out, "(no Python frames: a thread without a Python thread state)"));
    free(out);

    /* one process: no section */
    rec_dump_groups one;
    assert_int_equal(rec_dump_group_stacks(tr.p, 1, &one), 0);
    assert_int_equal(one.n, 1);
    out = print_text(tr.p, 1, &one);
    assert_null(strstr(out, "Identical stacks"));
    free(out);
    rec_dump_groups_free(&one);
    rec_dump_groups_free(&g);
}

static void test_json(void **state)
{
    tree tr;
    make_tree(&tr);
    rec_dump_groups g;
    assert_int_equal(rec_dump_group_stacks(tr.p, 7, &g), 0);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(rec_dump_json(f, tr.p, 7, &g, 0), 0);
    fclose(f);
    const char *groups = strstr(buf, "\"groups\":[");
    assert_non_null(groups);
    assert_non_null(strstr(groups, "{\"pids\":[101,102,103,104,106],\"threads\":6,\"frames\":["
                                   "{\"function\":\"main\",\"file\":\"train.py\",\"line\":30},"
                                   "{\"function\":\"allreduce\",\"file\":\"/opt/dist/comm.py\","
                                   "\"line\":120}]}"));
    assert_non_null(strstr(groups, "{\"pids\":[105],\"threads\":1,"));
    assert_non_null(strstr(buf, "\"python\":false"));
    free(buf);
    rec_dump_groups_free(&g);
}

/* A free-threaded process without its GIL says why no thread holds it:
 * ", no GIL" on its line and "gil":"disabled"; another says neither. */
static void test_no_gil(void **state)
{
    tree tr;
    make_tree(&tr);
    tr.p[0].no_gil = 1;
    tr.p[0].version = "3.13.0";
    for (int i = 0; i < 3; i++)
        tr.t[i].holds_gil = -1;
    rec_dump_groups g;
    assert_int_equal(rec_dump_group_stacks(tr.p, 2, &g), 0);
    char *out = print_text(tr.p, 2, &g);
    assert_non_null(strstr(out, "Process 104: python3 train.py (Python 3.13.0, no GIL)\n"));
    assert_non_null(strstr(out, "Process 101: python3 train.py (Python 3.12.1)\n"));
    assert_null(strstr(out, "holds the GIL"));
    free(out);

    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(rec_dump_json(f, tr.p, 2, &g, 0), 0);
    fclose(f);
    const char *p104 = strstr(buf, "{\"pid\":104,");
    const char *p101 = strstr(buf, "{\"pid\":101,");
    assert_non_null(p104);
    assert_non_null(p101);
    assert_true(p104 < p101);
    const char *gil = strstr(p104, "\"gil\":\"disabled\"");
    assert_true(gil && gil < p101);
    assert_non_null(strstr(p104, "\"holds_gil\":null"));
    assert_non_null(strstr(p101, "\"gil\":\"enabled\""));
    free(buf);
    rec_dump_groups_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_groups),
        cmocka_unit_test(test_text),
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_no_gil),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
