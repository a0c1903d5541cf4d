/*
 * format/records.h — record bodies of format 1.4 as plain structs, with
 * one decoder and one encoder for all of them (spec/DESIGN-NOTES.md
 * "Record types"; field order and meaning are the spec's).
 *
 * The structs carry the body's values as encoded: ids are segment-local
 * (uv widths kept as uint64_t), strings are references (sref ids), except
 * STRING and SEGMENT_HEADER whose `str` fields borrow the body bytes.
 * `time` fields are absolute once decoded (the chunk's time cursor is
 * passed in and moved, see format/varint.h); `dur` fields are decoded to
 * absolute end times (end = start + dur).
 *
 * Decoding (trcf_decode): a body shorter than the fields is corrupt, a
 * longer one is fine (a later minor version appended fields).  Values are
 * not range-checked here beyond the encoding itself: ids against the
 * tables, kinds against enums, etc. are the model's job.
 * Encoding (trcf_encode): writes tag + len + body; fails only on memory
 * or (TRC_ERR_LIMIT) strings over TRC_MAX_STRING / too much metadata, or
 * (TRC_ERR_ARG) a negative duration or string with a NUL byte.
 */
#ifndef TRC_FORMAT_RECORDS_H
#define TRC_FORMAT_RECORDS_H

#include <stddef.h>
#include <stdint.h>

#include "trc/trc.h"
#include "format/buf.h"
#include "format/varint.h"

typedef enum trcf_type {
    TRCF_SEGMENT_HEADER = 1,
    TRCF_STRING = 2,
    TRCF_FRAME = 3,
    TRCF_STACK = 4,
    TRCF_PROCESS = 5,
    TRCF_THREAD = 6,
    TRCF_SAMPLE = 7,
    TRCF_COUNTER_DEF = 8,
    TRCF_COUNTER = 9,
    TRCF_GPU_DEVICE = 10,
    TRCF_GPU_KERNEL = 11,
    TRCF_GPU_MEMCPY = 12,
    TRCF_GPU_MEMSET = 13,
    TRCF_GPU_SYNC = 14,
    TRCF_API_CALL = 15,
    TRCF_MARKER = 16,
    TRCF_CLOCK_SYNC = 17,
    TRCF_LOSS = 18,
    TRCF_PROCESS_EXIT = 19,
    TRCF_SEGMENT_END = 20,
    TRCF_GPU_CONTEXT = 21,
    TRCF_GPU_STREAM = 22,
    TRCF_TYPE_MAX = 22        /* highest type this version knows */
} trcf_type;

/* SAMPLE flag bits beyond TRC_SAMPLE_* (bits 0-2) */
#define TRCF_SAMPLE_HAS_WEIGHT 0x100u
#define TRCF_SAMPLE_REPEAT 0x200u
#define TRCF_SAMPLE_PUBLIC_MASK 0x7u

typedef struct trcf_seg_header {
    uint64_t major, minor, clock;
    int64_t start_ns, wall_ns;
    uint64_t period_ns;
    trcf_str recorder, host, command_line;
    uint64_t n_meta;
    /* decode: the n_meta pairs, validated; walk them with trcf_meta_next */
    const uint8_t *meta, *meta_end;
    /* encode: n_meta entries */
    const trc_kv *kv;
} trcf_seg_header;

typedef struct trcf_string_def { uint64_t id; trcf_str s; } trcf_string_def;
typedef struct trcf_frame_def {
    uint64_t id, kind, function, file, line, first_line;
} trcf_frame_def;
typedef struct trcf_stack_def { uint64_t id, parent, frame; } trcf_stack_def;
typedef struct trcf_process_def {
    int64_t pid, ppid;
    uint64_t executable, interpreter, command_line;
    int64_t start_ns;
    /* 1.1 trailing fields (spec §7.5); a 1.0 body gives -1 and 0 */
    int64_t rank;
    uint64_t label;
    /* 1.2 trailing field (spec §7.5); a 1.0 or 1.1 body gives 0 */
    uint64_t layout;
} trcf_process_def;
typedef struct trcf_thread_def { uint64_t id; int64_t pid, tid; uint64_t name; } trcf_thread_def;

/* flags as encoded (HAS_WEIGHT / REPEAT included); weight, count, span
 * are 0 when their flag is absent. */
typedef struct trcf_sample {
    int64_t time;
    uint64_t thread, stack, flags;
    uint64_t weight, count, span;
} trcf_sample;

typedef struct trcf_counter_def {
    uint64_t id, name, unit;
    int64_t pid, device;
} trcf_counter_def;
typedef struct trcf_counter { uint64_t counter; int64_t time; double value; } trcf_counter;
typedef struct trcf_gpu_device {
    uint64_t device, name;
    uint8_t uuid[16];
    uint64_t sm_count, memory_bytes, cc_major, cc_minor;
} trcf_gpu_device;

typedef struct trcf_gpu_context {
    int64_t pid;
    uint64_t device, context;
} trcf_gpu_context;
typedef struct trcf_gpu_stream {
    int64_t pid;
    uint64_t device, context, stream;
    int64_t priority;
    uint64_t flags, name;
} trcf_gpu_stream;

typedef struct trcf_gpu_where {
    int64_t pid;
    uint64_t device, context, stream, correlation;
    int64_t start, end;
} trcf_gpu_where;
typedef struct trcf_gpu_kernel {
    trcf_gpu_where w;
    uint64_t name, grid[3], block[3], registers, static_smem, dynamic_smem;
    /* 1.3 trailing fields (spec §7.11); a body before 1.3 gives 0 */
    uint64_t graph, graph_node;
} trcf_gpu_kernel;
typedef struct trcf_gpu_memcpy {
    trcf_gpu_where w;
    uint64_t bytes, copy_kind, src_kind, dst_kind, dst_device;
} trcf_gpu_memcpy;
typedef struct trcf_gpu_memset {
    trcf_gpu_where w;
    uint64_t bytes, value, mem_kind;
} trcf_gpu_memset;
typedef struct trcf_gpu_sync { trcf_gpu_where w; uint64_t sync_kind; } trcf_gpu_sync;
typedef struct trcf_api_call {
    uint64_t thread;
    int64_t start, end;
    uint64_t domain, name, correlation, stack;
    int64_t result;
    uint64_t flags;
    /* 1.3 trailing field (spec §7.15); a body before 1.3 gives 0 */
    uint64_t capture;
    /* 1.4 trailing fields (spec §7.15); a body before 1.4 gives 0 */
    uint64_t graph, graph_exec;
} trcf_api_call;
typedef struct trcf_marker {
    uint64_t kind, thread;
    int64_t pid, start, end;
    uint64_t name, domain, color, id;
} trcf_marker;
typedef struct trcf_clock_sync {
    uint64_t domain;
    int64_t device, time, other_ns;
} trcf_clock_sync;
typedef struct trcf_loss {
    uint64_t kind, count;
    int64_t pid;
    uint64_t thread;
    int64_t start, end;
    uint64_t detail;
} trcf_loss;
typedef struct trcf_process_exit {
    int64_t pid, time, exit_code;
    uint64_t signal;
} trcf_process_exit;
typedef struct trcf_segment_end {
    int64_t end;
    uint64_t samples, threads, processes, gpu_activities, api_calls;
    uint64_t lost_samples, lost_gpu_records;
} trcf_segment_end;

typedef union trcf_body {
    trcf_seg_header seg;
    trcf_string_def string;
    trcf_frame_def frame;
    trcf_stack_def stack;
    trcf_process_def process;
    trcf_thread_def thread;
    trcf_sample sample;
    trcf_counter_def counter_def;
    trcf_counter counter;
    trcf_gpu_device gpu_device;
    trcf_gpu_kernel kernel;
    trcf_gpu_memcpy memcpy;
    trcf_gpu_memset memset;
    trcf_gpu_sync sync;
    trcf_api_call api;
    trcf_marker marker;
    trcf_clock_sync clock_sync;
    trcf_loss loss;
    trcf_process_exit process_exit;
    trcf_segment_end segment_end;
    trcf_gpu_context gpu_context;
    trcf_gpu_stream gpu_stream;
} trcf_body;

/* "SAMPLE", "GPU_KERNEL", ...; NULL for a type this version does not know. */
const char *trcf_type_name(uint64_t type);

/* Decode the body of a known record type (1..TRCF_TYPE_MAX) into *out,
 * moving *tcur over its time fields.  TRC_OK; TRC_ERR_CORRUPT or
 * TRC_ERR_LIMIT with *why set; TRC_ERR_ARG for an unknown type.
 * Borrowed pointers in *out point into body. */
trc_status trcf_decode(uint64_t type, const uint8_t *body, size_t len, int64_t *tcur,
                       trcf_body *out, const char **why);

/* Walk SEGMENT_HEADER metadata: call n_meta times with a cursor set by
 * trcf_meta_begin.  Cannot fail on a header trcf_decode accepted. */
void trcf_meta_begin(const trcf_seg_header *h, trcf_cur *c);
void trcf_meta_next(trcf_cur *c, trcf_str *key, trcf_str *value);

/* Append one record (tag, len, body) of a known type to b. */
trc_status trcf_encode(trcf_buf *b, uint64_t type, int64_t *tcur, const trcf_body *in);

/* SAMPLE, the hot record, without the union: inline encode and decode. */
static inline trc_status trcf_encode_sample(trcf_buf *b, int64_t *tcur, const trcf_sample *s)
{
    uint8_t *p, *body;
    uint64_t flags = s->flags;

    if (b->cap - b->len < 2 + 7 * TRCF_UV_MAX) {
        trc_status st = trcf_buf_grow(b, 2 + 7 * TRCF_UV_MAX);
        if (st != TRC_OK)
            return st;
    }
    p = b->data + b->len;
    *p++ = TRCF_SAMPLE << 1;
    body = ++p;
    p = trcf_put_time(p, tcur, s->time);
    p = trcf_put_uv(p, s->thread);
    p = trcf_put_uv(p, s->stack);
    p = trcf_put_uv(p, flags);
    if (flags & TRCF_SAMPLE_HAS_WEIGHT)
        p = trcf_put_uv(p, s->weight);
    if (flags & TRCF_SAMPLE_REPEAT) {
        p = trcf_put_uv(p, s->count);
        p = trcf_put_uv(p, s->span);
    }
    body[-1] = (uint8_t)(p - body);    /* <= 70 bytes: one-byte length */
    b->len = (size_t)(p - b->data);
    return TRC_OK;
}

/* Decode a SAMPLE body.  TRC_OK or TRC_ERR_CORRUPT (*why set). */
static inline trc_status trcf_decode_sample(const uint8_t *body, size_t len, int64_t *tcur,
                                            trcf_sample *s, const char **why)
{
    trcf_cur c;

    trcf_cur_init(&c, body, len);
    s->time = trcf_cur_time(&c, tcur);
    s->thread = trcf_cur_uv(&c);
    s->stack = trcf_cur_uv(&c);
    s->flags = trcf_cur_uv(&c);
    s->weight = (s->flags & TRCF_SAMPLE_HAS_WEIGHT) ? trcf_cur_uv(&c) : 0;
    if (s->flags & TRCF_SAMPLE_REPEAT) {
        s->count = trcf_cur_uv(&c);
        s->span = trcf_cur_uv(&c);
    } else {
        s->count = 1;
        s->span = 0;
    }
    if (!trcf_cur_ok(&c)) {
        *why = c.why;
        return c.err;
    }
    if (s->count < 1 || ((s->flags & TRCF_SAMPLE_REPEAT) && s->count < 2)) {
        *why = "repeat count below 2";
        return TRC_ERR_CORRUPT;
    }
    return TRC_OK;
}

#endif /* TRC_FORMAT_RECORDS_H */
