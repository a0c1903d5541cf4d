/*
 * rec.h — the recorder behind `trec`: start or attach to a
 * CPython program, sample every thread of it (and optionally of its
 * descendants) at a fixed rate from outside, and write a .trc trace.
 *
 * This is the surface tools/trec.c uses; the pieces it is built from are
 * declared in lib/rec/rec_int.h.  Internal API, not installed.  The
 * recorder never prints: messages go through rec_config.message and the
 * closing figures come back in a rec_result for the tool to print.
 *
 * Design: docs/design/architecture.md §4; CPython side: lib/py/pyproc.h.
 */
#ifndef TRC_LIB_REC_REC_H
#define TRC_LIB_REC_REC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef enum rec_msg_level { REC_MSG_NOTE, REC_MSG_WARN, REC_MSG_ERROR } rec_msg_level;

/* One line, no trailing newline.  ctx is rec_config.message_ctx. */
typedef void (*rec_message_fn)(void *ctx, rec_msg_level level, const char *text);

typedef struct rec_config {
    const char *output;        /* path template ("%p" = pid, "%%" = '%'), or "-" */
    pid_t pid;                 /* > 0: attach to it; 0: start argv */
    char *const *argv;         /* program to start (NULL-terminated) when pid == 0 */
    double rate_hz;            /* ticks per second (every thread sampled each tick) */
    int64_t duration_ns;       /* stop recording after this long; 0 = until the end */
    int subprocesses;          /* follow descendants too */
    int gil;                   /* record which thread holds the GIL */
    int no_gpu;                /* no CUPTI injection, no NVML counters */
    double gpu_rate_hz;        /* NVML counter rate; <= 0 = 10 Hz */
    const char *command_line;  /* trec's own command line, for the segment header */
    int self_timing;           /* measure the recorder's CPU per sample (rec_result.cost_*) */
    int spin;                  /* wait for ticks by watching the clock (a CPU kept busy) */
    int blocking;              /* stop each thread while its stack is read (ptrace) */
    int verbose;               /* a note per process: its CPython and where its layout came from */
    rec_message_fn message;    /* may be NULL (messages dropped) */
    void *message_ctx;
} rec_config;

typedef struct rec_result {
    int exit_status;           /* what trec exits with (see rec_run) */
    int trace_written;         /* 1 if the trace was put under its name (maybe cut short) */
    uint64_t samples;          /* thread samples written */
    uint64_t threads;          /* distinct threads sampled */
    uint64_t processes;        /* processes recorded */
    uint64_t ticks;            /* sampling ticks taken */
    uint64_t late_ticks;       /* ticks taken later than half a period */
    uint64_t missed_ticks;     /* ticks skipped because the recorder fell behind */
    uint64_t invalid;          /* thread samples dropped as torn/inconsistent */
    int64_t duration_ns;       /* recording time */
    uint64_t bytes;            /* trace bytes written (whole chunks) */
    int64_t cpu_ns;            /* the recorder's CPU time (user + system), all of it */
    /* With self_timing: the distribution of the recorder's thread CPU time
     * per sample within a tick (reading, interning, writing), in ns. */
    int64_t cost_p50_ns, cost_p90_ns, cost_p99_ns, cost_max_ns;
    uint64_t cost_n;
    uint64_t quiet_samples;    /* samples repeated from threads that had not run (switch records) */
    uint64_t torn_retries;     /* stack reads redone at once after a torn read */
    uint64_t switch_threads;   /* threads whose state came from switch records */
    uint64_t stops;            /* --blocking: threads stopped for a read */
    uint64_t slow_stops;       /* --blocking: stops that did not come within the wait */
    char output_path[4096];    /* the expanded path, "<stdout>" for "-" */
} rec_result;

/* Run one recording.  Returns (and stores in res->exit_status):
 *   - when trec started the program: the program's exit status, or
 *     128 + signal if it died of a signal; 127 (not found) / 126 (not
 *     executable) if it could not be started;
 *   - with --pid: 0 when recording ended normally (duration, Ctrl-C,
 *     target exit), 2 when the target cannot be recorded (with
 *     blocking: also when its threads cannot be stopped);
 *   - 2 for an output that cannot be opened (or is a directory);
 *   - when the trace could not be written completely (disk full, file
 *     size limit, closed pipe; it then ends at its last complete chunk):
 *     1, or the program's status when that is not 0.
 * Errors and warnings are reported through cfg->message.  Installs
 * signal handlers (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD; SIGPIPE
 * and SIGXFSZ ignored) for its duration.  Call once per process. */
int rec_run(const rec_config *cfg, rec_result *res);

#endif /* TRC_LIB_REC_REC_H */
