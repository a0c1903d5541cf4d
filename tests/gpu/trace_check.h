/*
 * tests/gpu/trace_check.h — read a whole .trc with the public reader into
 * an array of events with their strings and launch stacks copied, so the
 * GPU tests can check a trace record by record after the reader is gone.
 */
#ifndef TRC_TESTS_GPU_TRACE_CHECK_H
#define TRC_TESTS_GPU_TRACE_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "trc/trc.h"

#define TC_MAX_FRAMES 16

typedef struct tc_frame {
    char function[128];
    char file[256];
    uint32_t line;
} tc_frame;

typedef struct tc_event {
    trc_event_type type;
    union {
        trc_gpu_kernel kernel;
        trc_gpu_memcpy memcpy;
        trc_gpu_memset memset;
        trc_gpu_sync sync;
        trc_api_call api;
        trc_marker marker;
        trc_loss loss;
        trc_clock_sync clock;
        trc_gpu_device device;
        trc_gpu_context context;
        trc_gpu_stream stream;
        trc_counter_value counter;
        trc_segment_end end;
    } u;
    char name[512];          /* kernel, API, marker, device, counter, stream name */
    char domain[64];         /* marker domain; counter unit */
    char detail[256];        /* loss detail */
    int64_t tid;             /* API call / marker thread's OS tid, -1 none */
    int depth;               /* API call: stack depth (frames[0] = leaf) */
    tc_frame frames[TC_MAX_FRAMES];
} tc_event;

typedef struct tc_trace {
    tc_event *ev;
    size_t n;
    size_t reader_losses;    /* losses the reader detected (damage) */
    size_t segments;
} tc_trace;

/* Load path.  Returns TRC_OK or the reader's error.  tc_free after. */
trc_status tc_load(const char *path, tc_trace *t);
void tc_free(tc_trace *t);

/* Events of a type. */
size_t tc_count(const tc_trace *t, trc_event_type type);
/* The i-th event of a type, NULL past the end. */
const tc_event *tc_nth(const tc_trace *t, trc_event_type type, size_t i);
/* The API call with this correlation id, NULL if none. */
const tc_event *tc_api_by_corr(const tc_trace *t, uint32_t corr);

#endif
