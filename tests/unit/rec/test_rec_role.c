/*
 * test_rec_role.c — what trec records of a process beyond its command
 * line (lib/rec/role.c): the rank an environment block says (the order
 * of the variables, LOCAL_RANK only without a global rank, values that
 * are no rank, a block cut without its last NUL) and the role a main
 * thread's stack shows (DataLoader and Pool worker loops, matched by
 * function and file, the innermost winning).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "lib/rec/rec_int.h"

/* An environment block from "A=1|B=2" ('|' for the NULs). */
static int64_t rank_of(const char *s)
{
    char buf[512];
    size_t n = strlen(s);
    memcpy(buf, s, n + 1);
    for (size_t i = 0; i < n; i++)
        if (buf[i] == '|')
            buf[i] = '\0';
    return rec_environ_rank(buf, n + 1);
}

static void test_rank(void **state)
{
    (void)state;
    assert_int_equal(rank_of("PATH=/bin|HOME=/root"), -1);
    assert_int_equal(rank_of(""), -1);
    assert_int_equal(rank_of("RANK=3"), 3);
    assert_int_equal(rank_of("PATH=/bin|RANK=0|X=1"), 0);
    /* the global rank wins over the local one, wherever each is */
    assert_int_equal(rank_of("LOCAL_RANK=1|RANK=5"), 5);
    assert_int_equal(rank_of("LOCAL_RANK=1"), 1);
    assert_int_equal(rank_of("SLURM_PROCID=7|PMI_RANK=6"), 6);
    assert_int_equal(rank_of("SLURM_PROCID=7|OMPI_COMM_WORLD_RANK=2|PMI_RANK=6"), 2);
    assert_int_equal(rank_of("SLURM_PROCID=7|LOCAL_RANK=0"), 7);
    /* not a rank: counts as absent, the next variable is taken */
    assert_int_equal(rank_of("RANK=|LOCAL_RANK=2"), 2);
    assert_int_equal(rank_of("RANK=-1|LOCAL_RANK=2"), 2);
    assert_int_equal(rank_of("RANK=3x"), -1);
    assert_int_equal(rank_of("RANK=2147483648"), -1);
    assert_int_equal(rank_of("RANK=2147483647"), 2147483647);
    /* names must match whole */
    assert_int_equal(rank_of("XRANK=4|RANKS=5|MY_LOCAL_RANK=6"), -1);
    assert_int_equal(rank_of("RANK"), -1);
    /* a block cut inside its last entry (no final NUL) */
    assert_int_equal(rec_environ_rank("A=1\0RANK=12", 11), 12);
    assert_int_equal(rec_environ_rank("RANK=12", 6), 1);
}

static const char *role_of(const py_frame_info *frames, int depth)
{
    const py_frame_info *v[16];
    for (int i = 0; i < depth; i++)
        v[i] = &frames[i];
    return rec_stack_role(v, depth);
}

static void test_role(void **state)
{
    (void)state;
    const char *dl = "/usr/lib/python3/dist-packages/torch/utils/data/_utils/worker.py";
    const char *pool = "/home/u/.pyenv/versions/3.11.7/lib/python3.11/multiprocessing/pool.py";
    const char *proc = "/usr/lib/python3.11/multiprocessing/process.py";
    /* leaf first: a DataLoader worker forked from a script's main() */
    py_frame_info fork_dl[] = {
        { "Queue.get", "/usr/lib/python3.11/multiprocessing/queues.py", 1, 1, 0 },
        { "_worker_loop", dl, 300, 200, 0 },
        { "BaseProcess.run", proc, 108, 103, 0 },
        { "BaseProcess._bootstrap", proc, 314, 290, 0 },
        { "main", "train.py", 20, 10, 0 },
        { "<module>", "train.py", 30, 1, 0 },
    };
    assert_string_equal(role_of(fork_dl, 6), REC_ROLE_DATALOADER);
    py_frame_info pool_w[] = {
        { "burn", "mp_pool.py", 5, 2, 0 },
        { "mapstar", pool, 48, 47, 0 },
        { "worker", pool, 125, 97, 0 },
        { "BaseProcess.run", proc, 108, 103, 0 },
    };
    assert_string_equal(role_of(pool_w, 4), REC_ROLE_MP_WORKER);
    /* a DataLoader worker forked by a pool worker is a DataLoader worker */
    py_frame_info both[] = {
        { "_worker_loop", dl, 300, 200, 0 },
        { "worker", pool, 125, 97, 0 },
    };
    assert_string_equal(role_of(both, 2), REC_ROLE_DATALOADER);
    /* the name alone, or the file alone, is not enough */
    py_frame_info other[] = {
        { "worker", "/home/u/myproj/pool.py", 1, 1, 0 },
        { "_worker_loop", "/home/u/loader.py", 1, 1, 0 },
        { "helper", dl, 1, 1, 0 },
        { NULL, NULL, 0, 0, 0 },
        { "worker", NULL, 0, 0, 0 },
    };
    assert_null(role_of(other, 5));
    assert_null(role_of(other, 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rank),
        cmocka_unit_test(test_role),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
