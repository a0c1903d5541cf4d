/*
 * tests/support/fuzz_sinks.h — every consumer of .trc bytes that hostile
 * input must not break (spec §8: every byte is hostile), one entry each,
 * shared by the libFuzzer harnesses (tests/fuzz/fuzz_*.c) and the replay
 * of saved findings (tests/unit/fuzz/test_fuzz_replay.c):
 *
 *   chunk       format/scan.c + chunk.c: scan to the end, whole and in
 *               small reads (both must agree), inflate, CRCs, and a
 *               rebuild of every good chunk that must decode the same;
 *   records     format/record.c + records.c on a raw decoded payload:
 *               frame, decode every record, encode(decode(x)) stable;
 *   reader      the public reader to the end (every event's references
 *               resolve, whole and piecewise reads agree) and trc-dump's
 *               listing, --check, --events and --summary (lib/dump);
 *   collapsed, stats (+pstats, trc-stats' table), speedscope (CPU and
 *   GPU profiles), chrome (CPU and GPU tracks), nvvp (summary, GPU and
 *   API traces, CSV, SVG), gpu (call-site stage feeding collapsed and
 *   stats, trc-stats --gpu summary), lines (trc-lines: text, and JSON
 *   with no source found), flamegraph (trc2flamegraph, also --diff;
 *   its SVG must be XML text): the converters' sinks fed by their
 *   own pipeline (lib/export/pipeline/pipeline.h), with the tools'
 *   default selection and again with every option and a --idle
 *   --from/--to window.
 *
 * Each run reads data[0..size) to the end, writes to `out` and returns 0,
 * or -1 with a one-line reason in why[] when an invariant broke (an
 * unresolvable reference, disagreeing reads, an unstable re-encoding, a
 * reader loop, one allocation over FS_ALLOC_CAP).  Crashes and sanitizer reports
 * are the caller's to see.  Test code: plain malloc, aborts nothing.
 */
#ifndef TRC_TESTS_SUPPORT_FUZZ_SINKS_H
#define TRC_TESTS_SUPPORT_FUZZ_SINKS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trc/trc.h"

#define FS_ALLOC_CAP ((size_t)64 << 20)   /* largest single allocation allowed */
#define FS_MAX_EVENTS 1000000u            /* more events than this from one input: a loop */

typedef int (*fs_fn)(const uint8_t *data, size_t size, FILE *out, char *why, size_t n);

typedef struct fs_target {
    const char *name;        /* "chunk", "records", "reader", "collapsed", ... */
    fs_fn run;
    int trc_input;           /* 1: input is a .trc file; 0: a decoded chunk payload */
} fs_target;

/* All targets, in the order above; fs_n_targets of them. */
extern const fs_target fs_targets[];
extern const size_t fs_n_targets;
/* The target called name, or NULL. */
const fs_target *fs_find(const char *name);

/* Run t on one input with the allocation hook reset, then check the
 * largest single allocation against FS_ALLOC_CAP.  0 or -1 (why set). */
int fs_run(const fs_target *t, const uint8_t *data, size_t size, FILE *out, char *why, size_t n);

/* What converters rely on for one event (strings present, ids resolving
 * through r, stacks acyclic and within TRC_MAX_DEPTH).  0 or -1 (why). */
int fs_check_event(const trc_reader *r, const trc_event *ev, char *why, size_t n);

/* The decoding targets (fuzz_decode.c), also reachable through the table. */
int fs_chunk(const uint8_t *data, size_t size, FILE *out, char *why, size_t n);
int fs_records(const uint8_t *data, size_t size, FILE *out, char *why, size_t n);
int fs_reader(const uint8_t *data, size_t size, FILE *out, char *why, size_t n);

/* Write the printf-style reason into why[n]; returns -1. */
int fs_fail(char *why, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif /* TRC_TESTS_SUPPORT_FUZZ_SINKS_H */
