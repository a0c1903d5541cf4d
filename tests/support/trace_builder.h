/*
 * tests/support/trace_builder.h — helpers for tests that write and read
 * .trc bytes in memory (linked into every unit test; the codec's own
 * tests use all of it, other tests may use any part).
 *
 *   - tb_buf + tb_write: a trc_write_fn collecting output in memory;
 *   - tb_read_mem: read a byte range with the public reader (optionally
 *     in small pieces, like a pipe) and render every event as one text
 *     line with names resolved, so traces read different ways compare as
 *     string lists;
 *   - tb_chunk / tb_rec: craft chunks and records by hand (unknown types,
 *     must-understand records, other versions, bad lengths);
 *   - tb_chunks: the chunk layout of a well-formed trace;
 *   - tb_gen: the public writer with a sticky status, which the
 *     synthetic scenarios are written with (tests/support/folded_traces.c,
 *     timeline_traces.c, nvvp_traces.c): after the first failing call
 *     every later one does nothing, and the scenario reports that first
 *     error at the end.
 * Everything here aborts the test (via assert-like checks returning
 * errors) rather than the library: it allocates with plain malloc, so
 * trc_alloc_fail_after() does not hit it.
 */
#ifndef TRC_TESTS_SUPPORT_TRACE_BUILDER_H
#define TRC_TESTS_SUPPORT_TRACE_BUILDER_H

#include <stddef.h>
#include <stdint.h>

#include "trc/trc.h"
#include "format/buf.h"

typedef struct tb_buf {
    uint8_t *p;
    size_t len, cap;
    int fail_after;       /* > 0: writes after this many succeed fail (EPIPE) */
    int writes;
} tb_buf;

/* trc_write_fn appending to a tb_buf (ctx).  Returns -1 with errno
 * EPIPE once fail_after writes have been done (when set). */
int tb_write(void *ctx, const void *buf, size_t len);
void tb_append(tb_buf *b, const void *p, size_t n);
void tb_buf_free(tb_buf *b);

/* A trc_read_fn over memory; max_read > 0 caps each read (pipe-like). */
typedef struct tb_src {
    const uint8_t *p;
    size_t len, pos, max_read;
} tb_src;
long tb_read(void *ctx, void *buf, size_t len);

/* Everything a reader produced for some bytes. */
typedef struct tb_result {
    char **lines;         /* one per event, see tb_render */
    uint64_t *offsets;    /* ev->offset of each */
    int *types;           /* ev->type of each */
    size_t n, cap;
    trc_status status;    /* what ended reading: TRC_ERR_EOF normally */
    char error[512];      /* trc_reader_error() at the end */
    trc_reader_stats stats;
    uint32_t threads, stacks, frames;
    uint64_t samples;     /* sum of sample counts */
    uint64_t loss_count[16]; /* by trc_loss_kind, reader-made losses only */
    uint64_t losses;      /* reader-made loss events */
} tb_result;

/* Read bytes p[0..len) with trc_reader_open_callback (name "mem.trc"),
 * max_read as in tb_src.  Returns the final status (also in out).  Stops
 * after 10 million events to turn a reader loop into a test failure. */
trc_status tb_read_mem(const uint8_t *p, size_t len, size_t max_read, tb_result *out);
void tb_result_free(tb_result *r);
/* Number of lines not starting with "LOSS" */
size_t tb_result_events(const tb_result *r);

/* One canonical line for an event, names and stacks resolved. */
void tb_render(const trc_reader *r, const trc_event *ev, char *buf, size_t n);

/* ---- crafting ---- */

/* Append one chunk: header (major, minor, kind, flags as given; bit 0 is
 * set by tb_chunk when level > 0 and deflate shrinks it) + payload. */
void tb_chunk(tb_buf *out, uint8_t major, uint8_t minor, uint8_t kind, uint8_t flags,
              uint64_t seq, int64_t base, const uint8_t *payload, size_t len, int level);
/* Append a record (tag, len, body) with any type / bit to a payload. */
void tb_rec(trcf_buf *payload, uint64_t type, int must_understand, const void *body, size_t len);
/* Append a SEGMENT_HEADER record with typical values (period 1 ms). */
void tb_rec_header(trcf_buf *payload, unsigned major, unsigned minor);

/* Chunk layout of a trace with valid framing: offsets[i] and ends[i] of
 * up to max chunks; returns the number of chunks. */
size_t tb_chunks(const uint8_t *p, size_t len, uint64_t *offsets, uint64_t *ends, size_t max);

/* ---- writing a scenario ---- */

typedef struct tb_gen {
    trc_writer *w;
    trc_status st;        /* the first error; TRC_OK until then */
} tb_gen;

/* Open the writer on fd, or on out (trc_writer_open_callback over
 * tb_write) when out is not NULL.  Returns g->st. */
trc_status tb_gen_open(tb_gen *g, int fd, tb_buf *out, const trc_writer_options *o);
/* g->st = st unless an earlier error is kept. */
void tb_gen_check(tb_gen *g, trc_status st);
/* Any writer call, skipped after an error: TB_DO(g, trc_writer_loss, &l). */
#define TB_DO(g, fn, ...)                                                                    \
    do {                                                                                     \
        if ((g)->st == TRC_OK)                                                               \
            (g)->st = fn((g)->w, __VA_ARGS__);                                               \
    } while (0)
/* Definitions: the new id, 0 after an error. */
uint32_t tb_gen_frame(tb_gen *g, trc_frame_kind kind, const char *fn, const char *file,
                      uint32_t line, uint32_t first_line);
uint32_t tb_gen_stack(tb_gen *g, uint32_t parent, uint32_t frame);
uint32_t tb_gen_thread(tb_gen *g, int64_t pid, int64_t tid, const char *name);
uint32_t tb_gen_counter_def(tb_gen *g, const char *name, const char *unit, int64_t pid,
                            int32_t device);
/* Close the writer once (end_ns is the SEGMENT_END time); the first error
 * of the whole scenario, the close's included. */
trc_status tb_gen_close(tb_gen *g, int64_t end_ns);

/* ---- a standard trace ---- */

/* Writes a multi-chunk trace into out: 3 threads (one renamed), 6 stacks,
 * n_samples samples with repeats, a counter, GPU records, a marker and a
 * loss, with small chunks (chunk_bytes) and the given compression level.
 * Returns TRC_OK or the first writer error. */
trc_status tb_standard_trace(tb_buf *out, int n_samples, uint32_t chunk_bytes, int level);

#endif /* TRC_TESTS_SUPPORT_TRACE_BUILDER_H */
