/*
 * lib/export/chrome/chrome_int.h — what the two halves of the Chrome Trace
 * exporter share: the exporter's state and the event-writing pieces of
 * chrome_writer.c, used by chrome.c (CPU samples, counters, losses,
 * names) and by chrome_gpu*.c (GPU activities, CUDA API calls, markers).
 * Internal to lib/export/chrome.
 */
#ifndef TRC_LIB_EXPORT_CHROME_INT_H
#define TRC_LIB_EXPORT_CHROME_INT_H

#include <stdint.h>

#include "lib/export/chrome/chrome.h"
#include "lib/export/common/cpuview.h"
#include "lib/export/common/json_out.h"

/* Thread ids this exporter invents (extra tracks of a process, GPU
 * streams whose number is taken) start here: Linux thread ids stay below
 * 2^22 (PID_MAX_LIMIT), so they never collide with real ones. */
#define CHR_SYNTH_TID 0x40000000
/* The pseudo-process of GPU device d is CHR_GPU_PID + d, for d up to
 * CHR_GPU_DEVICE_MAX: the pids stay positive 32-bit numbers, which
 * viewers read, and above every real pid.  A trace naming a device past
 * that is refused (chr_gpu_pid) rather than folded onto another device's
 * process. */
#define CHR_GPU_PID 0x7fff0000
#define CHR_GPU_DEVICE_MAX 0xffffu

struct cthread;
typedef struct chr_gpu chr_gpu;

struct chrome {
    chrome_options opt;
    cpuview *view;
    jsonw w;              /* the output, opened on first use */
    struct cthread *threads; /* in order of first sample */
    uint32_t n_threads, cap_threads;
    uint32_t *by_thread;  /* reader thread id -> index + 1 */
    uint32_t by_thread_cap;
    int64_t *pids;        /* processes with events, in order of first use */
    uint32_t n_pids, cap_pids;
    int started;          /* "{"traceEvents":[" written */
    uint64_t n_events;
    int have_start;
    int64_t start_ns, last_ns;
    char *recorder, *host, *command_line;
    int64_t wall_ns;
    uint64_t period_ns;
    struct ftext *ftexts; /* by view frame index */
    uint32_t ftexts_cap;
    chr_gpu *gpu;         /* chrome_gpu.c's state */
    exp_gpu_idle *busy;   /* the exact busy counter's stage (chrome_busy.c) */
    exp_gpu_callsite_stats lines; /* GPU time by attribution (chrome_gpu_hit) */
    char err[200];
    trc_status err_st;    /* the status that goes with err */
};

/* ---- chrome_busy.c: the exact GPU busy counter ---- */

/* Feed one event to c->busy (when there is one).  TRC_OK or
 * TRC_ERR_NOMEM. */
trc_status chr_busy_event(chrome *c, const trc_reader *r, const trc_event *ev);
/* Write its counter tracks, one "C" event per bucket per device.
 * TRC_OK or TRC_ERR_NOMEM (c->err set). */
trc_status chr_busy_write(chrome *c, const trc_reader *r);

/* ---- chrome_writer.c, for both halves ---- */

/* a - b wrapping modulo 2^64 like the format's time arithmetic (spec
 * §2.6): hostile timestamps must not overflow a signed subtraction. */
static inline int64_t chr_wsub(int64_t a, int64_t b)
{
    return (int64_t)((uint64_t)a - (uint64_t)b);
}

/* The time of ns as importers read our "ts" text: the double nearest
 * (ns - start) / 1000, which is what strtod gives for the 3-decimal form. */
static inline double chr_ts_value(const chrome *c, int64_t ns)
{
    return (double)chr_wsub(ns, c->start_ns) / 1000.0;
}

/* Record an out-of-memory failure in c->err and c->err_st; returns
 * TRC_ERR_NOMEM. */
trc_status chr_fail(chrome *c, const char *what);

/* Start the next element of traceEvents (the document header first). */
void chr_next_event(chrome *c);

/* "ts":T  (relative to the trace start, 3 decimals) */
void chr_write_ts(chrome *c, int64_t ns);

/* "ts":T,"dur":D of a slice [open, close) on a track whose earliest
 * slice starts at base_ns (see chrome.h: exact for speedscope's importer),
 * written at p, which has room for CHR_SPAN_MAX bytes; returns the byte
 * after it.  Cannot fail. */
#define CHR_SPAN_MAX 72
char *chr_put_span(const chrome *c, char *p, int64_t base_ns, int64_t open, int64_t close);

/* The text of dur for a slice [open, close] (trace clock) into dst (at
 * most 32 bytes); returns its length.  speedscope computes each end as
 * (ts - base) + dur in doubles, base being the first ts of the track; all
 * frames closing at one instant must get the same double, equal to
 * (close - base), or its importer mis-nests them.  a = ts(open) - base and
 * target = ts(close) - base are passed in (the callers cache them).  The
 * 3-decimal form usually does; when not, the nearest double that does is
 * written in full. */
size_t chr_fmt_dur(char *dst, double a, double target, int64_t open, int64_t close);

/* Remember that process pid has events (it gets names at the end).
 * 0, or -1 when out of memory. */
int chr_note_pid(chrome *c, int64_t pid);

/* {"ph":"M","name":NAME,"pid":P,"tid":T,"args":{   (the caller ends it) */
void chr_write_meta(chrome *c, const char *name, int64_t pid, int64_t tid);

/* ---- chrome_gpu.c ---- */

/* wait_mem: chrome_options.wait_mem */
chr_gpu *chr_gpu_new(uint32_t wait_mem);
void chr_gpu_free(chr_gpu *g);

/* GPU_DEVICE, GPU_KERNEL/MEMCPY/MEMSET/SYNC, API_CALL and MARKER events.
 * Returns TRC_OK or TRC_ERR_NOMEM (c->err set). */
trc_status chr_gpu_event(chrome *c, const trc_reader *r, const trc_event *ev);

/* The pseudo-process of GPU device (noted for naming).  -1 with c->err
 * and c->err_st set: TRC_ERR_LIMIT for a device past CHR_GPU_DEVICE_MAX,
 * TRC_ERR_NOMEM when out of memory. */
int64_t chr_gpu_pid(chrome *c, uint32_t device);

/* Write every slice still held back (reordering, flows, open ranges). */
trc_status chr_gpu_flush(chrome *c, const trc_reader *r);

/* Names and sort order of the GPU processes and of every extra track;
 * CPU threads use sort indices 0..n_threads-1, processes 0..n_pids-1.
 * TRC_OK or TRC_ERR_NOMEM (c->err set). */
trc_status chr_gpu_write_meta(chrome *c, const trc_reader *r);

#endif /* TRC_LIB_EXPORT_CHROME_INT_H */
