/*
 * lib/export/nvvp/nvvp_summary.h — nvprof's default summary (docs/design/outputs.md §5):
 * two sections, "GPU activities" (kernels by demangled name, copies as
 * "[CUDA memcpy HtoD]" etc., "[CUDA memset]") and "API calls" (runtime
 * and driver calls by name), each with columns Type, Time(%), Time,
 * Calls, Avg, Min, Max, Name; the section label only on its first row;
 * Time(%) is the share of the section; rows sorted by Time, largest
 * first, unless another key is asked for.
 *
 * Streaming: one row per distinct name is kept, never the records, so a
 * trace of any length summarises in constant memory per name.
 * Ownership: nvvp_summary_new / nvvp_summary_free.
 */
#ifndef TRC_LIB_EXPORT_NVVP_SUMMARY_H
#define TRC_LIB_EXPORT_NVVP_SUMMARY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trc/trc.h"

typedef enum nvvp_sort {
    NVVP_SORT_TIME = 0, NVVP_SORT_CALLS, NVVP_SORT_AVG, NVVP_SORT_MIN, NVVP_SORT_MAX,
    NVVP_SORT_NAME
} nvvp_sort;

typedef struct nvvp_summary_opts {
    int csv;          /* nvprof's CSV: quoted header, units row (us, %), data */
    int sort;         /* nvvp_sort; numeric keys sort largest first, name A-Z */
    size_t limit;     /* rows per section, 0 = all */
} nvvp_summary_opts;

/* A row of a section (for tests and other tools). */
typedef struct nvvp_summary_row {
    const char *name;
    uint64_t calls, total_ns;
    int64_t min_ns, max_ns;
} nvvp_summary_row;

typedef struct nvvp_summary nvvp_summary;

/* New empty summary; NULL when out of memory. */
nvvp_summary *nvvp_summary_new(void);
void nvvp_summary_free(nvvp_summary *s);

/* Count one event (kernels, copies, memsets, API calls and GPU_DROPPED
 * losses matter; others are ignored). TRC_OK or TRC_ERR_NOMEM. */
trc_status nvvp_summary_add(nvvp_summary *s, trc_reader *r, const trc_event *ev);

/* Write both sections, then one warning line per kind of GPU data loss
 * seen.  TRC_OK, TRC_ERR_NOMEM, or TRC_ERR_IO (write failed). */
trc_status nvvp_summary_write(nvvp_summary *s, trc_reader *r, const nvvp_summary_opts *o,
                              FILE *out);

/* "time", "calls", "avg", "min", "max", "name" -> nvvp_sort; -1 if unknown. */
int nvvp_summary_sort_key(const char *word);

/* Totals of a section: 0 = GPU activities, 1 = API calls. */
uint64_t nvvp_summary_total_ns(const nvvp_summary *s, int sec);

/* Row i (0-based, in time order) of a section; 0 if no such row. */
int nvvp_summary_row_at(nvvp_summary *s, int sec, size_t i, nvvp_summary_row *out);

#endif
