/*
 * test_procname.c — process display names (lib/procname.c) over a table
 * of command lines: scripts, -m modules, the multiprocessing and loky
 * helpers' -c lines, interpreter options with and without arguments,
 * env wrappers, programs that are not Python, empty and missing fields,
 * labels and ranks from the recorder, and the cuts and replacements
 * that keep a name short and safe for every output format.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "lib/procname.h"

typedef struct row {
    const char *exe, *interp, *cmd, *label;
    int64_t rank;
    const char *want; /* the whole name, pid 812 */
} row;

#define PY "/usr/bin/python3.11"
#define CP "CPython 3.11.2"

static const row rows[] = {
    { PY, CP, "python3 train.py --lr 1", "", -1, "train.py (pid 812)" },
    { PY, CP, "/usr/bin/python3 /home/u/proj/train.py", "", -1, "train.py (pid 812)" },
    { PY, CP, "python3 train.py", "", 3, "train.py rank 3 (pid 812)" },
    { PY, CP, "python3 train.py", "", 0, "train.py rank 0 (pid 812)" },
    { PY, CP, "python3 -m torch.distributed.run --nproc_per_node 2 t.py", "", -1,
      "torch.distributed.run (pid 812)" },
    { PY, CP, "python3 -X dev -u -m pkg.mod arg", "", -1, "pkg.mod (pid 812)" },
    { PY, CP, "python3 -Xdev -OO -mpkg.mod", "", -1, "pkg.mod (pid 812)" },
    { PY, CP, "python3 -W ignore -B script.py", "", -1, "script.py (pid 812)" },
    { PY, CP, "python3 --check-hash-based-pycs always x.py", "", -1, "x.py (pid 812)" },
    { PY, CP, "python3 -- -odd.py", "", -1, "-odd.py (pid 812)" },
    { PY, CP, "python3 -c print(1)", "", -1, "python3 -c (pid 812)" },
    { PY, CP, "python3 -c", "", -1, "python3 -c (pid 812)" },
    { PY, CP, "python3 -m", "", -1, "python3 -m (pid 812)" },
    { PY, CP, "python3 -", "", -1, "python3 - (pid 812)" },
    { PY, CP, "python3", "", -1, "python3 (pid 812)" },
    { PY, CP, "python3 -u", "", -1, "python3 (pid 812)" },
    { PY, CP,
      "/usr/bin/python3 -c from multiprocessing.spawn import spawn_main; spawn_main(tracker_fd=5, "
      "pipe_handle=7) --multiprocessing-fork",
      "", -1, "multiprocessing worker (pid 812)" },
    { PY, CP, "python3 -c from multiprocessing.resource_tracker import main;main(5)", "", -1,
      "multiprocessing.resource_tracker (pid 812)" },
    { PY, CP, "python3 -c from multiprocessing.forkserver import main; main(8, 9, ['__main__'])",
      "", -1, "multiprocessing.forkserver (pid 812)" },
    { PY, CP, "python3 -m joblib.externals.loky.backend.popen_loky_posix --process-name "
      "LokyProcess-1 --pipe 11", "", -1, "loky worker (pid 812)" },
    { PY, CP, "python3 -c from joblib.externals.loky.backend.resource_tracker import main; "
      "main(3, False)", "", -1, "loky resource_tracker (pid 812)" },
    { PY, CP, "python3 -c from joblib.externals.loky.backend.popen_loky_posix import x", "", -1,
      "loky worker (pid 812)" },
    { PY, CP, "/usr/bin/env python3 x.py", "", -1, "x.py (pid 812)" },
    { PY, CP, "env -i PYTHONPATH=/a python3 -u x.py", "", -1, "x.py (pid 812)" },
    { "/usr/bin/bash", "", "bash -c make", "", -1, "bash (pid 812)" },
    { "/usr/bin/make", "", "", "", -1, "make (pid 812)" },
    { "", "", "", "", -1, "process (pid 812)" },
    { "", "", "/opt/bin/tool --x", "", -1, "tool (pid 812)" },
    { PY, CP, "", "", -1, "python3.11 (pid 812)" },
    { PY, CP, "celery worker -A app", "", -1, "celery (pid 812)" },
    { "/usr/bin/uwsgi", CP, "uwsgi --ini a.ini", "", -1, "uwsgi (pid 812)" },
    { PY, CP, "/home/u/.pyenv/versions/3.12.1/bin/python3 a.py", "", -1, "a.py (pid 812)" },
    { "/usr/bin/pypy3", "", "pypy3 b.py", "", -1, "b.py (pid 812)" },
    /* the recorder's label wins over the command line it shares with its parent */
    { PY, CP, "python3 train.py", "DataLoader worker 1", -1, "DataLoader worker 1 (pid 812)" },
    { PY, CP, "python3 train.py", "DataLoader worker 0", 2, "DataLoader worker 0 rank 2 (pid 812)" },
    /* sanitised: no quotes, backslashes, semicolons or control characters */
    { PY, CP, "python3 a\"b'c\\d;e\tf.py", "", -1, "a_b_c_d_e_f.py (pid 812)" },
    { PY, CP, "python3 x.py", "l\nab\"el", -1, "l_ab_el (pid 812)" },
    { PY, CP, "python3 \xce\xb4.py", "", -1, "\xce\xb4.py (pid 812)" },
};

static void test_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const row *r = &rows[i];
        trc_process p = { 1, 812, 1, r->exe, r->interp, r->cmd, 0, r->rank, r->label, "" };
        char out[PROCNAME_MAX];
        size_t n = procname(&p, 812, out, sizeof out);
        if (strcmp(out, r->want) != 0)
            fail_msg("row %zu: %s -> \"%s\", want \"%s\"", i, r->cmd, out, r->want);
        assert_int_equal(n, strlen(out));
    }
}

static void test_null_fields(void **state)
{
    char out[PROCNAME_MAX];
    trc_process p = { 1, 9, -1, NULL, NULL, NULL, 0, -1, NULL, NULL };
    (void)state;
    procname(&p, 9, out, sizeof out);
    assert_string_equal(out, "process (pid 9)");
    /* a process never described: the pid given */
    procname(NULL, 77, out, sizeof out);
    assert_string_equal(out, "process (pid 77)");
    procname_base(NULL, out, sizeof out);
    assert_string_equal(out, "process");
}

/* A long name is cut at a character boundary and marked; the rank and
 * pid always follow whole; a small buffer still ends in a NUL. */
static void test_cut(void **state)
{
    char cmd[400], out[PROCNAME_MAX], small[8];
    trc_process p = { 1, 812, 1, PY, CP, cmd, 0, 12, "", "" };
    (void)state;
    strcpy(cmd, "python3 ");
    for (int i = 0; i < 60; i++)
        strcat(cmd, "\xce\xb4"); /* 120 bytes of two-byte characters */
    strcat(cmd, ".py");
    size_t n = procname(&p, 812, out, sizeof out);
    assert_true(n < sizeof out);
    const char *dots = strstr(out, "... rank 12 (pid 812)");
    assert_non_null(dots);
    assert_true((size_t)(dots - out) <= PROCNAME_BASE_MAX - 3);
    assert_int_equal((dots - out) % 2, 0); /* no half character */
    n = procname(&p, 812, small, sizeof small);
    assert_int_equal(n, strlen(small));
    assert_true(strlen(small) < sizeof small);
    assert_int_equal(procname_base(&p, small, 0), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_null_fields),
        cmocka_unit_test(test_cut),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
