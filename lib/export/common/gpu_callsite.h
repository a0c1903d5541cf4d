/*
 * lib/export/common/gpu_callsite.h — GPU time by Python call site: pairs each
 * GPU activity (kernel, memcpy, memset) with the API call that launched
 * it, by (pid, correlation id) (spec §7.12; docs/design/cupti.md §5), so that the
 * activity's duration can be charged to the launching Python stack plus a
 * leaf frame for the kernel.  The one place where trc2collapsed --gpu,
 * trc-stats --gpu-callsites and trc2pstats --gpu do that matching.
 *
 * Activities and their API calls may come in either order in a file.
 * Whatever is waiting for its partner is kept in a map keyed by (pid,
 * correlation); an entry leaves the map as soon as it is matched, so
 * memory follows the number of unmatched items (at most `window` of
 * them) and of distinct leaf names, never the number of activities.  A launch call that starts several activities (a graph
 * launch, a split copy) is still found for the later ones through a small
 * fixed-size cache of recently matched calls.  Unmatched items are given
 * up after `window` further GPU/API records (an activity given up is
 * charged to EXP_GPU_UNKNOWN_ROOT), at each new segment (correlation ids
 * restart with each recorded process) and at exp_gpu_callsite_finish.
 *
 * A launch call without Python frames (TRC_API_NO_PYTHON or stack 0:
 * PyTorch's autograd threads, NCCL and library threads) is charged to
 * the Python stack of a thread of the same process that waits at the
 * call's start (docs/design/cupti.md §5.1, docs/gpu.md): the hit keeps
 * the launching thread in `thread` and names the waiting one in
 * `waiter`.  A thread known to wait (in a sync call recorded with its
 * stack, or sampled off CPU in a known waiting function such as
 * backward or join) is preferred to one merely off CPU, which is
 * preferred to one on CPU; then the first thread met.  For that the
 * correlator keeps, per thread with Python frames, every run of its
 * samples with one stack and CPU state, and its sync calls (feed the
 * samples too, unselected, like the API calls): no age cut, so a
 * launch read long after the samples (trec writes the side trace after
 * them) is charged exactly; memory follows the changes of stack (24
 * bytes a run), never the number of samples or activities.

 * Results are handed to an emit callback, one per activity fed, in no
 * particular order: the converter pipeline's call-site stage, which
 * annotates each selected activity with its launch site for the sinks
 * that charge GPU time to call sites (lib/export/pipeline/pipeline.h).  Internal API, prefix exp_gpu_.
 * Ownership: exp_gpu_callsite_new / exp_gpu_callsite_free.
 */
#ifndef TRC_LIB_EXPORT_GPU_CALLSITE_H
#define TRC_LIB_EXPORT_GPU_CALLSITE_H

#include <stdint.h>

#include "trc/trc.h"

/* Root frames for activities that cannot be charged to a Python stack. */
#define EXP_GPU_NO_PYTHON_ROOT "<no Python stack>" /* launch call had none */
#define EXP_GPU_UNKNOWN_ROOT "<unknown launch>"    /* no launch call found */

/* Default give-up distance, in GPU/API records (see the file comment):
 * CUPTI delivers an activity within ~200 ms of its call, far fewer
 * records than this below ~500k launches per second, and it bounds the
 * map to ~16 MB however many calls go unmatched. */
#define EXP_GPU_DEFAULT_WINDOW (UINT64_C(1) << 18)

/* The frame that marks GPU time charged via a waiting thread, placed
 * between the waiting thread's stack and the leaf: "[via thread TID
 * NAME]", TID and NAME those of the launching thread. */
#define EXP_GPU_VIA_FRAME "via thread"

typedef enum exp_gpu_origin {
    EXP_GPU_PYTHON = 0,    /* launch call found, with a Python stack */
    EXP_GPU_NO_PYTHON = 1, /* launch call found, without one (TRC_API_NO_PYTHON, stack 0) */
    EXP_GPU_UNKNOWN = 2    /* correlation 0, or no launch call with that id */
} exp_gpu_origin;

typedef enum exp_gpu_kind {
    EXP_GPU_KERNEL = 0, EXP_GPU_MEMCPY = 1, EXP_GPU_MEMSET = 2
} exp_gpu_kind;

/* One activity, charged.  Borrowed for the duration of the callback. */
typedef struct exp_gpu_hit {
    int64_t pid;             /* the activity's process */
    uint32_t thread;         /* launching thread (reader id); 0 when origin is UNKNOWN */
    uint32_t stack;          /* launching Python stack; 0 unless origin is PYTHON */
    exp_gpu_origin origin;
    exp_gpu_kind kind;
    uint32_t name_id;        /* dense id >= 1 of `name` in this correlator */
    const char *name;        /* leaf: kernel name, "[CUDA memcpy HtoD]", "[CUDA memset]";
                              * owned by the correlator, valid until _free */
    uint64_t dur_ns;         /* end - start (0 if reversed) */
    uint32_t waiter;         /* 0: `stack` is the launcher's own (direct); else the
                              * waiting thread (reader id) whose stack `stack` is,
                              * the launcher having none (origin is PYTHON) */
    uint32_t graph;          /* a kernel's CUDA graph (GPU_KERNEL.graph), 0 = none;
                              * where it was captured: gpu_graph.h */
    uint32_t device;         /* the activity's device (where.device) */
} exp_gpu_hit;

/* Called once per activity counted, with the reader last fed.  A status
 * other than TRC_OK stops the correlator and is returned by the call that
 * emitted. */
typedef trc_status (*exp_gpu_emit_fn)(void *ctx, trc_reader *r, const exp_gpu_hit *hit);

/* GPU time of one device by attribution (exp_gpu_callsite_stats.dev). */
typedef struct exp_gpu_device_share {
    uint32_t device;                     /* EXP_GPU_OTHER_DEVICES: every device
                                          * past the first EXP_GPU_SHARE_DEVICES */
    uint64_t direct_ns, via_ns, none_ns;
} exp_gpu_device_share;

/* The share is kept device by device for this many distinct devices (a
 * machine's GPUs: 8 or 16 at most today); the time of any further one is
 * kept together under EXP_GPU_OTHER_DEVICES, so that the stats stay a
 * plain value a sink can copy. */
#define EXP_GPU_SHARE_DEVICES 16
#define EXP_GPU_OTHER_DEVICES UINT32_MAX

typedef struct exp_gpu_callsite_stats {
    uint64_t activities, api_calls;      /* fed in */
    uint64_t python, no_python, unknown; /* activities emitted, by origin */
    uint64_t gpu_ns;                     /* their summed durations */
    uint64_t via;                        /* of `python`, charged via a waiting thread */
    uint64_t direct_ns, via_ns, none_ns; /* gpu_ns by attribution: own Python stack,
                                          * a waiting thread's, none */
    uint32_t n_dev;                      /* the same per device, by device number */
    exp_gpu_device_share dev[EXP_GPU_SHARE_DEVICES + 1];
    uint64_t live, peak_live;            /* map entries now / at most */
    uint64_t retired;                    /* entries given up unmatched */
} exp_gpu_callsite_stats;

typedef struct exp_gpu_callsite exp_gpu_callsite;

/* New correlator.  window 0 = EXP_GPU_DEFAULT_WINDOW.  emit is borrowed
 * with ctx.  NULL when out of memory. */
exp_gpu_callsite *exp_gpu_callsite_new(uint64_t window, exp_gpu_emit_fn emit, void *ctx);
/* Frees everything, names included; pending items are dropped unemitted
 * (call exp_gpu_callsite_finish first to emit them). */
void exp_gpu_callsite_free(exp_gpu_callsite *c);

/* Feed events in file order: TRC_EV_SEGMENT, TRC_EV_API_CALL,
 * TRC_EV_SAMPLE and TRC_EV_GPU_KERNEL/MEMCPY/MEMSET matter, others are
 * ignored.  Every launch call must be fed, and every sample for the
 * waiting-thread rule (a launch is charged from the samples fed before
 * its activity is emitted, as in trec's files, where the samples come
 * first); the activities fed are those counted (a
 * converter feeds the ones its selection keeps, and judges the launching
 * thread of each hit itself: lib/export/pipeline/pipeline.c).  r is
 * the reader the event came from (for the API call's thread → pid), the
 * same every time.  Returns TRC_OK, TRC_ERR_NOMEM, TRC_ERR_LIMIT (over
 * 2^32-2 live items or names) or what emit returned. */
trc_status exp_gpu_callsite_event(exp_gpu_callsite *c, trc_reader *r, const trc_event *ev);

/* The waiting-thread rule alone, for a stage that correlates nothing
 * (gpu_idle.c: which threads feed a device): exp_gpu_callsite_note_wait
 * keeps a sample or a sync call (other events are ignored), and
 * exp_gpu_callsite_waiter names the thread (reader id; 0 when none, and
 * *stack its stack then, when stack is not NULL) that a launch without
 * Python frames by `launcher` of pid at t is charged to, from what was
 * kept so far.  note_wait: TRC_OK, TRC_ERR_NOMEM or TRC_ERR_LIMIT. */
trc_status exp_gpu_callsite_note_wait(exp_gpu_callsite *c, const trc_reader *r,
                                      const trc_event *ev);
uint32_t exp_gpu_callsite_waiter(const exp_gpu_callsite *c, int64_t pid, uint32_t launcher,
                                 int64_t t, uint32_t *stack);

/* Give up everything still waiting (activities are emitted as UNKNOWN).
 * Call once at the end of input; feeding may continue after it. */
trc_status exp_gpu_callsite_finish(exp_gpu_callsite *c);

/* Counts hit into s (activities by origin, GPU time by attribution), as
 * the correlator does for what it emits; for a sink that counts only
 * the hits its selection keeps.  Cannot fail. */
void exp_gpu_stats_add(exp_gpu_callsite_stats *s, const exp_gpu_hit *hit);

/* The share of GPU time with a Python line, one line without newline:
 * "75.00% of GPU time has a Python line (direct 50.00%, via a waiting
 * thread 25.00%, none 25.00%)" (each of direct_ns, via_ns, none_ns of
 * their sum, rounded half up to 0.01 on its own, so they may add up to
 * 100 +- 0.02; "no GPU time to give a Python line" when the sum is 0).
 * When the hits counted came from several devices, the same for each
 * device follows, by device number: "; device 0: 100.00% (direct
 * 100.00%, via a waiting thread 0.00%, none 0.00%); device 1: ..."
 * ("other devices" for EXP_GPU_OTHER_DEVICES); one device: nothing more.
 * The same words in every view, so that the views can be compared.
 * Writes at most n bytes, NUL included (EXP_GPU_SHARE_MAX holds every
 * case); returns buf. */
#define EXP_GPU_SHARE_MAX (160 + (EXP_GPU_SHARE_DEVICES + 1) * 96)
const char *exp_gpu_share_str(const exp_gpu_callsite_stats *s, char *buf, size_t n);

/* One part of exp_gpu_share_str, for views that show each device apart
 * (trc-top's header, one line each; trc2chrome's GPU process labels, each
 * its own device's): part -1 is the whole without the devices ("75.00% of
 * GPU time has a Python line (...)", or "no GPU time to give a Python
 * line"), part i >= 0 device s->dev[i]'s, in the words it has in the
 * whole line ("device 1: 80.00% (direct 20.00%, via a waiting thread
 * 60.00%, none 20.00%)", "other devices: ..."), "" when i >= s->n_dev or
 * that device had no GPU time.  At most n bytes, NUL included
 * (EXP_GPU_SHARE_PART_MAX holds every case); returns buf. */
#define EXP_GPU_SHARE_PART_MAX 160
const char *exp_gpu_share_part_str(const exp_gpu_callsite_stats *s, int part, char *buf,
                                   size_t n);
/* The part of s that holds device's share: the index of s->dev[] where it
 * is kept (that of EXP_GPU_OTHER_DEVICES past the first
 * EXP_GPU_SHARE_DEVICES), or -1 when its GPU time was not counted. */
int exp_gpu_share_device_part(const exp_gpu_callsite_stats *s, uint32_t device);

/* Counters so far.  Cannot fail. */
void exp_gpu_callsite_get_stats(const exp_gpu_callsite *c, exp_gpu_callsite_stats *out);

#endif /* TRC_LIB_EXPORT_GPU_CALLSITE_H */
