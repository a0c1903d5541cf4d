/*
 * role.c — what a recorded process is, beyond what its command line
 * says (spec §7.5, the rank and label fields of format 1.1).
 *
 * Rank: distributed launchers give each process its rank in the
 * environment.  /proc/PID/environ is the environment the process was
 * started with (a later os.environ change is not there), which is the
 * one launchers set.  A global rank (RANK, then the MPI and Slurm
 * spellings) wins over LOCAL_RANK, which repeats on every node.
 *
 * Role: a forked worker has its parent's command line, so only its
 * Python stack says what it is.  The stack of a worker's main thread
 * holds the worker loop below the frames it inherited from the fork
 * (the parent's frames up to Process.start, then _bootstrap and run);
 * the innermost such loop names it, so that a DataLoader worker forked
 * by a Pool worker is a DataLoader worker.
 */
#include "lib/rec/rec_int.h"

#include "lib/util/alloc.h"

#include <stdio.h>
#include <string.h>

/* the environment variables that carry a rank, most global first */
static const char *const rank_vars[] = { "RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK",
                                         "SLURM_PROCID", "LOCAL_RANK" };
#define N_RANK_VARS (sizeof rank_vars / sizeof rank_vars[0])

/* A rank's value: decimal digits only, below 2^31; else -1. */
static int64_t rank_value(const char *v, size_t n)
{
    int64_t r = 0;
    if (n == 0 || n > 10)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (v[i] < '0' || v[i] > '9')
            return -1;
        r = r * 10 + (v[i] - '0');
    }
    return r < 2147483648LL ? r : -1;
}

int64_t rec_environ_rank(const char *env, size_t len)
{
    int64_t found[N_RANK_VARS];
    for (size_t k = 0; k < N_RANK_VARS; k++)
        found[k] = -1;
    size_t i = 0;
    while (i < len) {
        const char *e = env + i;
        const char *end = memchr(e, '\0', len - i);
        size_t n = end ? (size_t)(end - e) : len - i;
        const char *eq = memchr(e, '=', n);
        if (eq) {
            size_t klen = (size_t)(eq - e);
            for (size_t k = 0; k < N_RANK_VARS; k++)
                if (strlen(rank_vars[k]) == klen && memcmp(e, rank_vars[k], klen) == 0)
                    found[k] = rank_value(eq + 1, n - klen - 1);
        }
        i += n + 1;
    }
    for (size_t k = 0; k < N_RANK_VARS; k++)
        if (found[k] >= 0)
            return found[k];
    return -1;
}

/* Environments larger than this are read this far: launchers' variables
 * come early (they are set when the process is made), and reading a
 * huge environment at every attach is not worth a rank. */
#define ENVIRON_MAX (256 * 1024)

int64_t rec_proc_rank(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/environ", (int)pid);
    char *buf = trc_malloc(ENVIRON_MAX);
    if (!buf)
        return -1;
    int64_t rank = -1;
    FILE *f = fopen(path, "re");
    if (f) {
        size_t n = fread(buf, 1, ENVIRON_MAX, f);
        fclose(f);
        rank = rec_environ_rank(buf, n);
    }
    trc_free(buf);
    return rank;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = s ? strlen(s) : 0, k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

const char *rec_stack_role(const py_frame_info *const *frames, int depth)
{
    /* frames[0] is the leaf; the innermost worker loop wins */
    for (int i = 0; i < depth; i++) {
        const py_frame_info *f = frames[i];
        if (!f || !f->function)
            continue;
        if (strcmp(f->function, "_worker_loop") == 0 &&
            ends_with(f->file, "torch/utils/data/_utils/worker.py"))
            return REC_ROLE_DATALOADER;
        if (strcmp(f->function, "worker") == 0 && ends_with(f->file, "multiprocessing/pool.py"))
            return REC_ROLE_MP_WORKER;
    }
    return NULL;
}
