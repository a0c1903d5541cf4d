/*
 * lib/gpu/trec_gpu.h — trec's side of GPU recording
 * (docs/gpu.md): what trec calls to say whether GPU support is built in,
 * to set up the traced program's environment so the CUDA driver loads
 * libtrec-cupti.so, to merge the per-process side traces the injection
 * writes, and to sample NVML counters on its own thread.
 *
 * In the tools' internal archive, not in libtrc; needs no CUDA headers
 * (NVML is declared here by hand and loaded with dlopen).  Internal API,
 * not installed.  Never prints.
 *
 * Sequence in trec (see docs/gpu.md "Wiring"):
 *   unless --no-gpu:
 *     trec_gpu_side_dir_new(output, dir)        before starting the program
 *     trec_gpu_setup_env(dir)                   ditto (it inherits the env)
 *     nv = trec_gpu_nvml_start(rate, NULL)      may be NULL: no counters
 *   each loop tick:  trec_gpu_nvml_drain(nv, w)
 *   at the end:      trec_gpu_nvml_drain(nv, w); trec_gpu_nvml_stop(nv);
 *                    trc_writer_close(w, ...);  (the main segment ends)
 *                    trec_gpu_merge(out_fd, dir, ended, ctx, &res)  appends side traces
 */
#ifndef TRC_LIB_GPU_TREC_GPU_H
#define TRC_LIB_GPU_TREC_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "trc/trc.h"

/* One line for `trec --version`:
 *   "GPU support: built in, CUPTI 13.0 injection found at /abs/libtrec-cupti.so;
 *    libcupti and GPUs are looked for when a program runs"
 *   "GPU support: off (built without CUDA)"
 *   "GPU support: off (libtrec-cupti.so not found; looked in ...)"
 * Static storage; cannot fail. */
const char *trec_gpu_support(void);

/* Absolute path of the injection library, or NULL.  Looked for, first
 * found wins:
 *   1. $TREC_CUPTI_INJECTION (explicit override);
 *   2. EXEDIR/../lib/trc/libtrec-cupti.so   (installed: PREFIX/bin/trec);
 *   3. EXEDIR/REL/libtrec-cupti.so          (build tree: REL is BUILD as
 *      seen from BIN when built, "../build" for bin/ and build/).
 * EXEDIR is the directory of /proc/self/exe: a tree moved as a whole
 * finds its own library, never the one of the tree it was built in.
 * Static storage. */
const char *trec_gpu_injection_path(void);

/* Create a private directory for the side traces: next to the output
 * file ("DIR/.trec-gpu-XXXXXX", so what was flushed survives a crash of
 * trec and lands on the same filesystem), or under $TMPDIR (default
 * /tmp) when output is NULL or "-".  Writes the path into dir.  Returns
 * 0, or -1 with errno set. */
int trec_gpu_side_dir_new(const char *output, char *dir, size_t len);

/* Set, in this process's environment (the program trec starts inherits
 * it, and so do the program's own children):
 *   CUDA_INJECTION64_PATH = trec_gpu_injection_path()
 *   NVTX_INJECTION64_PATH = the same library (it forwards to libcupti)
 *   TREC_GPU_DIR          = side_dir
 * Returns 0 when set; 1 when GPU recording cannot be set up (no
 * injection library, or CUDA_INJECTION64_PATH / NVTX_INJECTION64_PATH
 * already name another tool, which is left alone) with a one-line
 * reason in why; -1 on a setenv failure. */
int trec_gpu_setup_env(const char *side_dir, char *why, size_t whylen);

/* Undo trec_gpu_setup_env (for --no-gpu after all, or tests). */
void trec_gpu_clear_env(void);

typedef struct trec_gpu_merge_result {
    unsigned files;          /* side traces appended */
    unsigned empty;          /* empty side traces removed (process ended before any chunk) */
    uint64_t bytes;          /* bytes appended */
    unsigned sealed;         /* side traces closed by trec_gpu_seal first */
    int64_t sealed_pid;      /* the first of their processes */
    unsigned seal_failed;    /* side traces that could not be closed (appended as they are) */
    char seal_why[256];      /* the first such failure */
    char why[256];           /* on failure: what went wrong, naming the file */
} trec_gpu_merge_result;

/* Whether process pid has ended (a zombie has: it writes nothing more);
 * the caller knows how to tell (trec: its /proc reader). */
typedef int (*trec_gpu_ended_fn)(int64_t pid, void *ctx);

/* Append every side_dir/gpu-*.trc (in name order) to out_fd, which holds
 * the main trace already closed with trc_writer_close (concatenated
 * segments are a valid trace; the reader merges their ids), then remove
 * the files and side_dir.  Files that could not be appended are kept.
 * A side trace whose process (the PID of gpu-PID.trc) has ended, as
 * `ended` says (NULL: none is taken for ended), without closing it is
 * first closed by trec_gpu_seal (res->sealed).
 * Returns 0, or -1 with res->why set (errno set). */
int trec_gpu_merge(int out_fd, const char *side_dir, trec_gpu_ended_fn ended, void *ctx,
                   trec_gpu_merge_result *res);

typedef struct trec_gpu_seal_result {
    int sealed;              /* 1: the closing chunk was appended */
    uint64_t cut_bytes;      /* a partial chunk cut off the end first */
    uint64_t gpu_activities; /* what the closed segment holds */
    uint64_t api_calls;
    char why[256];           /* on failure: what went wrong, naming the file */
} trec_gpu_seal_result;

/* Close the last segment of side trace `path` when it has no SEGMENT_END
 * (its process, `pid`, ran no exit handler: os._exit, a signal, a
 * crash), so that it reads as a finished recording that lost its
 * unflushed GPU records: a partial chunk at the end is cut off, then one
 * DATA chunk is appended with a LOSS record (kind OTHER, count 1, the
 * detail naming pid and why) and a SEGMENT_END with the segment's
 * totals (lib/gpu/gpu_seal.c).  Call it only once the process is gone: a
 * live writer would go on after the end.  A segment that ended, or a
 * file with none, is left as it is (res->sealed 0).  Returns 0, or -1
 * with res->why set. */
int trec_gpu_seal(const char *path, int64_t pid, trec_gpu_seal_result *res);

/* ---- NVML counters ---------------------------------------------------- */

typedef struct trec_gpu_nvml trec_gpu_nvml;

/* Start sampling every visible GPU at hz (<= 0: 10) on an own thread:
 * gpu.util (percent), gpu.mem.used (bytes), gpu.sm_clock (MHz),
 * gpu.power (mW), one counter per device, device = the CUDA ordinal
 * under CUDA_VISIBLE_DEVICES (indices or GPU-UUID prefixes; NVML counts
 * in PCI order).  lib: the NVML library (NULL = $TREC_NVML_LIB when set
 * and not empty, else "libnvidia-ml.so.1").
 * Returns NULL — quietly — when NVML or a GPU is absent, or on failure. */
trec_gpu_nvml *trec_gpu_nvml_start(double hz, const char *lib);

/* Move the queued values into w (defining the counters first); call from
 * the thread that owns w (the writer is not thread-safe).  n may be
 * NULL (no-op).  Returns TRC_OK or the writer's error. */
trc_status trec_gpu_nvml_drain(trec_gpu_nvml *n, trc_writer *w);

/* Stop the thread and free; queued values not drained are dropped.
 * NULL is a no-op. */
void trec_gpu_nvml_stop(trec_gpu_nvml *n);

/* Devices sampled; values dropped because the queue was full. */
int trec_gpu_nvml_devices(const trec_gpu_nvml *n);
uint64_t trec_gpu_nvml_overflow(const trec_gpu_nvml *n);

#endif
