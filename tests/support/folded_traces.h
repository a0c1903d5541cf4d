/*
 * tests/support/folded_traces.h — synthetic traces for the tests and the
 * benchmark of trc2collapsed, trc-stats and trc2pstats, written with the
 * public writer API through the one trace builder (trace_builder.h).  Deterministic (fixed clocks, host, recorder): the
 * same calls give the same bytes, so outputs can be pinned as goldens.
 *
 * Two layers: a small in-memory trace builder for unit tests (write a
 * few frames and samples, then read them back), and whole-file
 * generators for the end-to-end tests and the benchmark.  Built with
 * -DCONV_GEN_MAIN this file is also the `conv-gen` program (mk/conv_gen.mk).
 */
#ifndef TRC_TESTS_SUPPORT_FOLDED_TRACES_H
#define TRC_TESTS_SUPPORT_FOLDED_TRACES_H

#include <stddef.h>
#include <stdint.h>

#include "trc/trc.h"

#define CONV_START_NS 5000000000LL   /* segment start on the trace clock */
#define CONV_PERIOD_NS 1000000ULL    /* 1 kHz */
#define CONV_MS 1000000LL

/* ---- in-memory builder ------------------------------------------- */

typedef struct conv_tb conv_tb;

/* A writer into memory (start CONV_START_NS, period 1 ms, 4 KiB chunks so
 * that small traces span several chunks).  NULL when out of memory. */
conv_tb *conv_tb_new(void);
void conv_tb_free(conv_tb *b);
trc_writer *conv_tb_writer(conv_tb *b);

/* Each helper records the first error and then does nothing; check
 * conv_tb_status() before reading. */
uint32_t conv_tb_frame(conv_tb *b, const char *fn, const char *file, uint32_t line,
                       uint32_t first_line);
uint32_t conv_tb_native(conv_tb *b, const char *fn);
/* A synthetic frame (TRC_FRAME_OTHER), such as trec's "[native thread
 * NAME]" root. */
uint32_t conv_tb_other(conv_tb *b, const char *fn);
/* The stack of frames f[0] (root) .. f[n-1] (leaf); 0 for n == 0. */
uint32_t conv_tb_stack(conv_tb *b, size_t n, const uint32_t *f);
uint32_t conv_tb_thread(conv_tb *b, int64_t pid, int64_t tid, const char *name);
/* A sample at CONV_START_NS + t_ms milliseconds; weight 0 = period. */
void conv_tb_sample(conv_tb *b, double t_ms, uint32_t thread, uint32_t stack, uint32_t flags,
                    uint64_t weight_ns);
void conv_tb_loss(conv_tb *b, trc_loss_kind kind, uint64_t count);
trc_status conv_tb_status(const conv_tb *b);

/* Closes the writer (first call only) and opens a reader over the bytes
 * written.  NULL on failure.  The reader must be freed before the tb. */
trc_reader *conv_tb_reader(conv_tb *b);
const unsigned char *conv_tb_bytes(const conv_tb *b, size_t *n);

/* ---- whole traces ------------------------------------------------ */

typedef struct conv_info {
    uint64_t samples;     /* all samples written, counting repeats */
    uint64_t on_cpu;      /* of them on CPU */
    uint64_t on_cpu_ns;   /* their weight */
    uint64_t idle;        /* off CPU */
    uint64_t gil;         /* on CPU and known to hold the GIL */
} conv_info;

/* The golden fixture: two processes (100 "python3 app.py", 200
 * "python3 -m worker"), threads MainThread (100/100), "pool;1\n" (100/101,
 * a name with ';' and a newline) and "w2" (200/200).  Frames: <module>,
 * main at two lines, recursive fib (depth up to 4), compute in a file
 * under site-packages, json's decode in the stdlib, a native frame,
 * "odd;name" with '%' and control characters, a method qualname.
 * Samples: folded repeats, weights of 1 and 2 ms, idle samples, samples
 * without the GIL, a sample without Python frames.  Clean (exit 0). */
trc_status conv_write_fixture(int fd, conv_info *info);

/* The fixture plus recorded losses (5 samples missed, 1 invalid). */
trc_status conv_write_lossy(int fd, conv_info *info);

/* n samples over 4 threads of one process; stacks from a pool of ~600
 * (depth up to 48, with recursion) chosen by a deterministic random walk
 * that often stays put (folded repeats) and moves to parent or child;
 * ~10% idle. */
trc_status conv_write_big(int fd, uint64_t n, conv_info *info);

/* One thread, SAMPLES samples 1 ms apart, then LOSS records of the
 * recorder: MISSED, INVALID, LATE samples (a count of 0 writes none):
 * traces on either side of the loss rule (lib/lossrule.h). */
trc_status conv_write_ticks(int fd, uint64_t samples, uint64_t missed, uint64_t invalid,
                            uint64_t late, conv_info *info);

#endif
