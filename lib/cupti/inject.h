/*
 * lib/cupti/inject.h — the CUDA injection's entry points and test hooks
 * (docs/design/cupti.md §1; docs/gpu.md).
 *
 * libtrec-cupti.so exports exactly these (lib/cupti/cupti.map):
 *   InitializeInjection          called by the CUDA driver at cuInit when
 *                                CUDA_INJECTION64_PATH names this library;
 *   InitializeInjectionNvtx{,2}  NVTX_INJECTION64_PATH may name this
 *                                library too: forwarded to libcupti's;
 *   trec_cupti_*                 test hooks (a fake CUPTI table, shutdown,
 *                                flush, the launch-stack capture alone,
 *                                NVTX forwarding with a fake table).
 *
 * Everything else, including the copy of libtrc linked in, is local to
 * the library so it never clashes with the host program.
 */
#ifndef TRC_LIB_CUPTI_INJECT_H
#define TRC_LIB_CUPTI_INJECT_H

#include <stdint.h>

#include "lib/cupti/cupti_api.h"
#include "trc/trc.h"

#define TREC_CUPTI_EXPORT __attribute__((visibility("default")))

/* Configuration a test (or the fixture generator) may give instead of
 * the environment.  Zero/NULL fields take the defaults shown. */
typedef struct trec_cupti_config {
    const char *path;            /* side trace; NULL = $TREC_GPU_DIR/gpu-PID.trc,
                                    or ./trec-gpu-PID.trc when TREC_GPU_DIR is unset */
    int64_t (*clock)(void);      /* trace clock; NULL = trc_now_ns (CLOCK_MONOTONIC) */
    int64_t (*realtime)(void);   /* for clock-sync pairs; NULL = CLOCK_REALTIME */
    int64_t pid;                 /* 0 = getpid() */
    const char *host;            /* NULL = gethostname() */
    const char *command_line;    /* NULL = /proc/self/cmdline */
    const char *executable;      /* NULL = /proc/self/exe */
    int64_t wall_ns;             /* segment wall clock; 0 = now */
    int no_flush_thread;         /* 1 = no periodic flusher (tests flush by hand) */
    int no_thread_names;         /* 1 = do not read /proc/self/task/TID/comm */
    void (*warn)(const char *line); /* NULL = "trec: ..." on stderr */
    /* launch-site capture; NULL = the calling thread's Python stack
     * (lib/cupti/launch.c).  The fixture generator fakes Python stacks. */
    trc_status (*capture)(trc_writer *w, uint32_t *stack, uint32_t *flags);
} trec_cupti_config;

/* The driver's entry point.  Loads libcupti, then as
 * trec_cupti_init_with_api.  Guarded against a second call.  Always
 * returns 1 (success for the driver): a failure turns GPU recording off
 * with one warning and never affects the program. */
TREC_CUPTI_EXPORT int InitializeInjection(void);
TREC_CUPTI_EXPORT int InitializeInjectionNvtx(void *get_export_table);
TREC_CUPTI_EXPORT int InitializeInjectionNvtx2(void *get_export_table);

/* Start recording through api (copied; a fake for tests).  cfg may be
 * NULL.  Returns 0 when recording, 1 when GPU recording is off (another
 * CUPTI subscriber, CUPTI refused; one warning was issued and, where the
 * side trace could be opened, a loss record says why), -1 when the side
 * trace cannot be written or when already started. */
TREC_CUPTI_EXPORT int trec_cupti_init_with_api(const cupti_api *api, const trec_cupti_config *cfg);

/* What the at-exit handler does (forced flush, dropped-record count,
 * close the side trace), then unsubscribe, disable the activity kinds
 * and free everything so a test can start again.  No-op when not
 * running or in a forked child. */
TREC_CUPTI_EXPORT void trec_cupti_shutdown(void);

/* One flusher round now: cuptiActivityFlushAll(0) then flush the
 * writer's open chunk.  Returns 0, -1 when not running. */
TREC_CUPTI_EXPORT int trec_cupti_flush(void);

/* 1 while recording in this process (0 after shutdown, in a forked
 * child, or when off). */
TREC_CUPTI_EXPORT int trec_cupti_active(void);

/* The launch-site capture alone, as done at API_ENTER: read the calling
 * thread's Python stack and write a trace at path holding one
 * "cudaLaunchKernel" API_CALL with that stack (flags LAUNCH, plus
 * NO_PYTHON when there were no Python frames).  Returns 1 when a
 * Python stack was recorded, 0 when there was none, -1 on error.  For the tests that
 * call it from Python through ctypes. */
TREC_CUPTI_EXPORT int trec_cupti_test_capture_stack(const char *path);

/* 10,000 launch-site captures on the calling thread (as from a thread
 * that runs no Python): one capture first (attaches the walker), then
 * the 10,000, counting what they cost.  Writes "captures N no_python N
 * thread_lists N allocs N" to path.  Returns 0, -1 on error.  One
 * argument, so that it can be a pthread start routine; for the tests
 * that call it from Python through ctypes. */
TREC_CUPTI_EXPORT int trec_cupti_test_launches(const char *path);

/* 1 when the injection's lock is held by any thread right now, else 0:
 * for a fake CUPTI that checks no CUPTI call is made under it. */
TREC_CUPTI_EXPORT int trec_cupti_test_lock_held(void);

/* What InitializeInjectionNvtx (version 1) or InitializeInjectionNvtx2
 * (version 2) does with libcupti's table, here with api (a fake): one
 * CUPTI call first, then forward get_export_table to api's entry point.
 * Returns its answer, 0 when api has none. */
TREC_CUPTI_EXPORT int trec_cupti_test_nvtx_forward(const cupti_api *api, int version,
                                                   void *get_export_table);

#endif
