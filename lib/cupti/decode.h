/*
 * lib/cupti/decode.h — CUPTI 13 activity records → .trc records
 * (docs/design/cupti.md §4, §7; record layouts spec §7.12, spec/DESIGN-NOTES.md types
 * 10–18).
 *
 * One decoder per side trace.  It maps CUPTI's timestamps onto the trace
 * clock (adding clock_offset_ns, 0 when CUPTI already uses ours through
 * the timestamp callback), drops records whose timestamps are missing or
 * reversed (counted, reported as one loss record per buffer), filters
 * noisy API calls, attaches the parked launch stacks, turns NVTX
 * start/end pairs into ranges, and CUPTI overhead records into markers
 * of domain "cupti".
 *
 * Not thread-safe: the injection holds its mutex around every call.
 */
#ifndef TRC_LIB_CUPTI_DECODE_H
#define TRC_LIB_CUPTI_DECODE_H

#include <stdint.h>

#include "trc/trc.h"
#include "lib/cupti/apinames.h"
#include "lib/cupti/launch.h"

typedef struct cupti_decode_stats {
    uint64_t records, kernels, memcpys, memsets, syncs, api_calls, markers, overheads;
    uint64_t devices, contexts;
    uint64_t filtered;       /* noisy API calls not recorded */
    uint64_t bad_time;       /* records dropped for missing/reversed timestamps */
    uint64_t zero_kernels;   /* of those, kernels with a zero start or end */
    uint64_t dropped;        /* records CUPTI reported dropped */
    uint64_t unknown;        /* kinds this decoder does not handle */
    uint64_t launch_stacks;  /* launch API records that got a parked stack */
} cupti_decode_stats;

typedef struct cupti_decoder cupti_decoder;

/* Borrows every argument (they must outlive the decoder); names, dm and
 * launch may be NULL (then: "cbid N" names, no demangling, no stacks).
 * thread_names: read /proc/self/task/TID/comm for new threads.  NULL on
 * allocation failure. */
cupti_decoder *cupti_decoder_new(trc_writer *w, int64_t pid, const cupti_names *names,
                                 cupti_demangler *dm, cupti_launch *launch, int thread_names);
void cupti_decoder_free(cupti_decoder *d);

/* Trace clock = CUPTI timestamp + offset. */
void cupti_decoder_set_clock_offset(cupti_decoder *d, int64_t offset_ns);

/* on: the API records' thread ids are not kernel tids (the thread id
 * type was refused), so a launch's record takes the tid parked at its
 * callback instead (cupti_launch_park).  Off by default. */
void cupti_decoder_set_parked_tids(cupti_decoder *d, int on);

/* Decode one record (borrowed; strings in it are copied as needed).
 * Returns TRC_OK or the writer's error. */
trc_status cupti_decode_record(cupti_decoder *d, const CUpti_Activity *rec);

/* End of one activity buffer: write a loss record for the records
 * dropped here for bad timestamps, and one for `dropped` records CUPTI
 * reported lost (0 = none). */
trc_status cupti_decode_buffer_end(cupti_decoder *d, uint64_t dropped);

/* End of the trace: NVTX ranges still open are written as PUSH markers. */
trc_status cupti_decode_finish(cupti_decoder *d);

/* Writer id of thread (pid, tid), defining it on first use. */
trc_status cupti_decode_thread(cupti_decoder *d, int64_t pid, int64_t tid, uint32_t *id);

void cupti_decode_get_stats(const cupti_decoder *d, cupti_decode_stats *out);

#endif
