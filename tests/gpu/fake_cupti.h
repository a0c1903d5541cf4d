/*
 * tests/gpu/fake_cupti.h — a scripted CUPTI for tests.
 *
 * fake_cupti_table() fills a cupti_api whose functions record what the
 * injection asks for (subscriptions, enabled kinds and callbacks) and
 * feed it what a real CUPTI would: API callbacks on the calling thread,
 * and activity buffers — obtained through the injection's own request
 * callback, filled with records of CUPTI 13's own structs, handed back
 * through its completion callback on flush.  Timestamps come from the
 * timestamp callback the injection registers (as CUPTI's would), or
 * CLOCK_REALTIME when it refuses that callback (fake_cupti_opts).
 *
 * Single test at a time; not thread-safe except fake_cupti_launch,
 * which may run on several threads (it takes a lock).
 */
#ifndef TRC_TESTS_GPU_FAKE_CUPTI_H
#define TRC_TESTS_GPU_FAKE_CUPTI_H

#include <stddef.h>
#include <stdint.h>

#include "lib/cupti/cupti_api.h"

typedef struct fake_cupti_opts {
    const char *refuse_holder;   /* non-NULL: Subscribe fails MULTIPLE_SUBSCRIBERS naming it */
    int no_subscribe_v2;         /* table without cuptiSubscribe_v2 */
    int no_timestamp_callback;   /* RegisterTimestampCallback unavailable */
    size_t buffer_records;       /* deliver at most this many records per buffer (0 = no cap) */
    uint32_t pid;                /* process id in records; 0 = getpid() */
    uint32_t version;            /* cuptiGetVersion's answer; 0 = table without it */
    /* CUPTI 12.6u2–13.0's bug: the first this many kernel records
     * delivered while a timestamp callback is registered carry zero
     * start and end */
    unsigned callback_zero_kernels;
    /* a libcupti newer than the headers: every record delivered is this
     * many bytes longer (filled with 0xA5), and the walker steps by the
     * longer size */
    size_t record_extra;
    /* and it names a driver API the headers do not know (id past
     * CUPTI_DRIVER_TRACE_CBID_SIZE, below 1024) */
    uint32_t new_driver_cbid;
    const char *new_driver_name;
    /* a slow GetNextRecord: it busy-waits this long per record (what a
     * big buffer costs the thread that decodes it) */
    uint64_t next_record_delay_ns;
    /* refusals part-way through set-up: ActivityEnable of this kind
     * (0 = none), every EnableCallback, SetThreadIdType */
    CUpti_ActivityKind fail_kind;
    int fail_enable_callback;
    int fail_thread_id_type;
    /* asked at every CUPTI call but GetNextRecord: 1 when the
     * injection's lock is held (trec_cupti_test_lock_held) */
    int (*lock_held)(void);
    /* records go into a buffer per thread, asked of the injection at the
     * thread's first record and held until the next FlushAll, as
     * CUPTI's own per-thread buffers are */
    int per_thread_buffers;
} fake_cupti_opts;

/* The process id records carry (opts.pid or getpid()). */
uint32_t fake_cupti_pid(void);

/* Reset all fake state and fill *api.  opts may be NULL. */
void fake_cupti_table(cupti_api *api, const fake_cupti_opts *opts);

/* Now on the clock CUPTI would stamp records with. */
uint64_t fake_cupti_now(void);

/* Fire API_ENTER for (domain, cbid) on the calling thread if the
 * injection enabled that callback; returns the correlation id the fake
 * assigned.  fake_cupti_api_exit fires API_EXIT. */
uint32_t fake_cupti_api_enter(CUpti_CallbackDomain domain, CUpti_CallbackId cbid);
void fake_cupti_api_exit(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, uint32_t corr);
/* API_EXIT with the call's params struct and its return value (0 =
 * success).  The fake's cuptiGetGraphId and cuptiGetGraphExecId answer
 * a handle's own value: (CUgraph)(uintptr_t)7 has id 7. */
void fake_cupti_api_exit_params(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                uint32_t corr, const void *params, int result);

/* Fire a resource-domain callback (e.g. context destroy). */
void fake_cupti_resource(CUpti_CallbackId cbid);

/* Queue one activity record (copied; its size is its struct's size). */
void fake_cupti_add(const void *record, size_t size);

/* Queue a kernel record (CUpti_ActivityKernel10) of work still running
 * on the GPU: a normal flush leaves it with CUPTI, a forced flush hands
 * it over unfinished (end = 0), fake_cupti_complete finishes it. */
void fake_cupti_add_unfinished(const CUpti_ActivityKernel10 *kernel);
void fake_cupti_complete(void);
size_t fake_cupti_unfinished(void);        /* kernels still running */

/* Records CUPTI "dropped": reported by the next GetNumDroppedRecords. */
void fake_cupti_drop(size_t n);

/* The CUpti_ActivityAPI record of a call [start, start+dur] by tid (0 =
 * the caller) with correlation id corr, queued unless the injection
 * disabled that API's records.  For calls whose callbacks a test fires
 * itself (nesting). */
void fake_cupti_api_record(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, uint64_t start,
                           uint64_t dur, uint32_t tid, uint32_t corr);

/* A complete API call as CUPTI reports it: ENTER/EXIT callbacks on this
 * thread and a CUpti_ActivityAPI record [start, start+dur] for tid.
 * Returns the correlation id. */
uint32_t fake_cupti_call(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, uint64_t start,
                         uint64_t dur, uint32_t tid);

/* Inspection. */
/* Another CUPTI client in the program (torch.profiler's Kineto):
 * registers its own buffer callbacks, which take every record from then
 * on (counted by fake_cupti_other_records), and disables every activity
 * kind.  fake_cupti_finalize: cuptiFinalize, as that client may call it:
 * subscriber, callbacks, buffer callbacks and kinds all gone; every
 * CUPTI call after it is counted (fake_cupti_calls_after_finalize). */
void fake_cupti_other_client(void);
void fake_cupti_finalize(void);
size_t fake_cupti_other_records(void);
unsigned fake_cupti_calls_after_finalize(void);

int fake_cupti_kind_enabled(CUpti_ActivityKind kind);
int fake_cupti_kinds_enabled(void);         /* how many kinds are enabled */
int fake_cupti_callback_enabled(CUpti_CallbackDomain domain, CUpti_CallbackId cbid);
int fake_cupti_api_activity_disabled(CUpti_CallbackDomain domain, CUpti_CallbackId cbid);
int fake_cupti_subscribed(void);
int fake_cupti_timestamp_callback_registered(void);
/* The calls made to the entry points that say what CUPTI has been
 * asked before NVTX reaches it, in order, space-separated:
 * "cuptiGetVersion", "cuptiGetTimestamp", "cuptiSubscribe",
 * "InitializeInjectionNvtx", "InitializeInjectionNvtx2". */
const char *fake_cupti_calls(void);
/* The calls made while opts.lock_held said 1, in order,
 * space-separated ("cuptiGetTimestamp ..."); forget: start afresh. */
const char *fake_cupti_calls_under_lock(void);
void fake_cupti_forget_calls_under_lock(void);
/* GetNextRecord calls made while opts.lock_held said 1 (the one call
 * allowed there: shows the probe is live). */
unsigned fake_cupti_next_records_under_lock(void);
size_t fake_cupti_thread_buffers(void);   /* per-thread buffers held now */
unsigned fake_cupti_flushes(void);          /* FlushAll calls */
unsigned fake_cupti_forced_flushes(void);
unsigned fake_cupti_buffers(void);          /* buffers delivered */
size_t fake_cupti_pending(void);            /* records queued, not yet delivered */

/* The walker used by the fake's GetNextRecord: records packed back to
 * back at their struct sizes, as libcupti lays them out (checked
 * against the real libcupti in test_gpu_decode when it loads). */
CUptiResult fake_cupti_next_record(uint8_t *buffer, size_t valid, CUpti_Activity **rec);
size_t fake_cupti_record_size(CUpti_ActivityKind kind);   /* 0 = unknown kind */

/* ---- the standard scenario ------------------------------------------- */

/* What fake_cupti_scenario produced, for tests to compare against. */
typedef struct fake_scenario {
    unsigned kernels, memcpys, memsets, syncs, markers_range, markers_instant, overheads;
    unsigned api_recorded;       /* API records that should reach the trace */
    unsigned api_noisy;          /* API records that must be filtered */
    unsigned launches;           /* API calls that launch GPU work */
    unsigned sync_calls;         /* API calls that can make the host wait (TRC_API_SYNC) */
    unsigned bad_time;           /* records with missing timestamps */
    unsigned dropped;            /* records reported dropped */
    unsigned copies_by_kind[11]; /* by CUpti_ActivityMemcpyKind */
    unsigned streams;            /* distinct streams used */
} fake_scenario;

/* Queue a small training-like run: two devices, three streams,
 * overlapping kernels (one mangled C++ name), copies of every kind
 * (HtoD, DtoH, DtoD, PtoP), a memset, stream/context/event syncs, noisy
 * query calls, NVTX push/pop and start/end ranges with a colour and an
 * instant, a CUPTI overhead record, a kernel with zero timestamps, and
 * dropped records.  API callbacks fire on the calling thread (tid in
 * records = tid, 0 = the caller's).  Records are queued, not flushed. */
void fake_cupti_scenario(fake_scenario *out, uint32_t tid);

#endif
