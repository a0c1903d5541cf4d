/*
 * lib/util/spill.h — the one spill file of libtrc: fixed-size records
 * that do not fit in memory moved to an anonymous temporary file and read
 * back by offset.
 *
 * The converters keep memory flat on long traces by moving what waits
 * (runs of samples, sorted intervals, waiting launches, interval logs)
 * out of memory; each needs only "append these records, tell me where",
 * "read n records at that offset" and, for a user that recycles slots,
 * "write over these records".  The file is made by tmpfile() on the first
 * write, so it is gone when closed or when the process ends, and nothing
 * is created for a trace that never spills.  A zeroed struct is an empty
 * spill; trcu_spill_close gives it back (and leaves it empty again).
 *
 * Errors are TRC_ERR_IO with errno kept from the call that failed, so the
 * caller can say why in its own words.  Not thread-safe.
 */
#ifndef TRC_LIB_UTIL_SPILL_H
#define TRC_LIB_UTIL_SPILL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trc/trc.h"

typedef struct trcu_spill {
    FILE *f;     /* NULL until the first write */
    int64_t end; /* bytes in the file: where the next append goes */
    int64_t pos; /* the stream's position after the last operation */
    int last;    /* that operation: 0 none, 'r' read, 'w' write */
} trcu_spill;

/* Append n records of size bytes from recs at the end of the file
 * (creating it first if needed); *off gets their offset.  TRC_OK or
 * TRC_ERR_IO (*off untouched). */
trc_status trcu_spill_append(trcu_spill *sp, const void *recs, size_t n, size_t size, int64_t *off);

/* Write n records over the file from offset off (records appended before,
 * whose slot the caller reuses; the file grows if they pass its end).
 * TRC_OK or TRC_ERR_IO. */
trc_status trcu_spill_write_at(trcu_spill *sp, int64_t off, const void *recs, size_t n,
                               size_t size);

/* Read n records of size bytes at offset off into recs.  TRC_OK, or
 * TRC_ERR_IO (also when fewer than n are there, or nothing was ever
 * written). */
trc_status trcu_spill_read(trcu_spill *sp, int64_t off, void *recs, size_t n, size_t size);

/* Push what is buffered to the file, so that a write error shows here
 * rather than in a later read.  TRC_OK (also with no file) or TRC_ERR_IO. */
trc_status trcu_spill_flush(trcu_spill *sp);

/* 1 once something was written (the file exists), else 0. */
static inline int trcu_spill_used(const trcu_spill *sp) { return sp->f != NULL; }

/* Bytes in the file (0 before the first write). */
static inline int64_t trcu_spill_end(const trcu_spill *sp) { return sp->end; }

/* Close the file (if any) and make sp empty again. */
void trcu_spill_close(trcu_spill *sp);

/* Test hook, like trc_alloc_fail_after: the n-th spill operation from now
 * (n >= 1; counting the file's creation, each write, read and flush)
 * fails with TRC_ERR_IO and errno EIO, and so does every later one until
 * the hook is reset; n = -1 disables failures.  Not thread-safe: tests
 * only. */
void trcu_spill_fail_after(long n);

/* Spill operations attempted since the last trcu_spill_fail_after() call
 * (as counted there): lets a test know when a run made no more. */
long trcu_spill_count(void);

#endif /* TRC_LIB_UTIL_SPILL_H */
