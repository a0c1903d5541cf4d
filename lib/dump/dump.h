/*
 * lib/dump/dump.h — the engine of trc-dump (tools/trc-dump.c): a
 * showdb-style listing of a .trc input chunk by chunk and record by
 * record (spec §4, §5, §7), a validity check (spec §8), and a summary of
 * what a trace holds.  Internal API, not installed.
 *
 * All three write their report to `out` (the tool's stdout).  Problems
 * found in the input are not printed here: each is handed, as one line
 * "NAME: offset 0x1a3: what", to the caller's problem callback, so that
 * the tool prints it the shared way ("trc-dump: error: ...").
 *
 * Each returns a verdict that the tool uses as its exit code:
 * DUMP_OK (0) the input is intact, DUMP_DAMAGED (1) damaged but partly
 * readable, DUMP_UNUSABLE (2) not a trace, unsupported version, or an I/O
 * or memory failure.
 */
#ifndef TRC_LIB_DUMP_DUMP_H
#define TRC_LIB_DUMP_DUMP_H

#include <stdint.h>
#include <stdio.h>

#include "trc/trc.h"

enum { DUMP_OK = 0, DUMP_DAMAGED = 1, DUMP_UNUSABLE = 2 };

/* One problem line (no trailing newline), borrowed for the call. */
typedef void (*dump_problem_fn)(void *ctx, const char *line);

typedef struct dump_opts {
    const char *name;          /* input name for messages ("run.trc", "<stdin>") */
    dump_problem_fn problem;   /* may be NULL: problems are then only counted */
    void *problem_ctx;
    int hex;                   /* listing: also hex-dump each record body */
    int strict;                /* check: any recorded loss is a finding (--strict) */
    dump_problem_fn warning;   /* check: the one warning line about the recording
                                  (no end record; --strict: recorded losses);
                                  may be NULL */
} dump_opts;

/* Listing: one line per chunk, one indented line per record.  Reads the
 * raw input through fn/ctx (borrowed) with the chunk scanner of
 * format/scan.h, so it shows damaged regions and skipped chunks too. */
int dump_listing(trc_read_fn fn, void *ctx, FILE *out, const dump_opts *o);

/* Check: read every event with the public reader r (borrowed), report
 * each problem the reader detects and each disagreement between a
 * segment's SEGMENT_END totals and what the segment held; then at most
 * one warning about the recording itself: a segment without its end
 * record (the recorder was killed), and with o->strict any loss the
 * recorder wrote; then one summary line whose verdict is "ok", "lossy"
 * (--strict's losses only: exit 1), "incomplete" (exit 1), "damaged"
 * or "unusable". */
int dump_check(trc_reader *r, FILE *out, const dump_opts *o);

/* Summary: counts per event type, threads, processes, samples, duration
 * and losses, read with the public reader r (borrowed). */
int dump_summary(trc_reader *r, FILE *out, const dump_opts *o);

/* Events: one line per event the public reader r (borrowed) yields,
 * ids resolved (lib/dump/dump_events.c).  Damage appears as "loss ...
 * by=reader" lines; only a terminal error goes to the problem callback. */
int dump_events(trc_reader *r, FILE *out, const dump_opts *o);
/* The line for one event (with its newline). */
void dump_event_line(FILE *out, const trc_reader *r, const trc_event *ev);

/* ---- shared helpers (lib/dump/dump_util.c) ---- */

/* Name of a record type ("SAMPLE"; "type-21" style for unknown ones,
 * written into buf). */
const char *dump_record_name(uint64_t type, char *buf, size_t len);
/* Lower-case event type name ("gpu_kernel"); "?" if out of range. */
const char *dump_event_name(trc_event_type t);
/* Loss kind name ("chunk_damaged"). */
const char *dump_loss_name(trc_loss_kind k);
/* Write s[0..len) to out as a double-quoted C-style string: \" \\ \n \t
 * \r and \xNN for other control bytes and bytes >= 0x7f; at most
 * `max` bytes shown, then "...". */
void dump_quote(FILE *out, const char *s, size_t len, size_t max);
/* Time as seconds with 9 decimals ("1.000000250"); handles negatives. */
void dump_time(FILE *out, int64_t ns);
/* Classify a terminal reader status into a verdict: NOT_TRC, VERSION
 * before any data, IO, NOMEM → DUMP_UNUSABLE; VERSION after data →
 * DUMP_DAMAGED. */
int dump_status_verdict(trc_status st, int had_data);

#endif /* TRC_LIB_DUMP_DUMP_H */
