/*
 * lib/export/common/gpu_units.h — number formatting for the NVIDIA-style GPU
 * views (docs/design/outputs.md §5): nvprof's unit-suffixed times ("82.592us"),
 * sizes ("4.0000MB", 1 KB = 1024 B as nvprof prints them), throughputs,
 * fixed-unit numbers for CSV, and the names nvprof gives copies and
 * memory kinds.
 *
 * Everything here is integer arithmetic on purpose: the trace printers
 * format millions of numbers and printf's %f would dominate their time.
 * No function allocates; none can fail.  Buffers must hold at least
 * GPU_NUM_BUF bytes.
 */
#ifndef TRC_LIB_EXPORT_COMMON_GPU_UNITS_H
#define TRC_LIB_EXPORT_COMMON_GPU_UNITS_H

#include <stddef.h>
#include <stdint.h>

#include "trc/trc.h"

#define GPU_NUM_BUF 48

/* a - b modulo 2^64 like the format's time arithmetic (spec §2.6):
 * hostile timestamps must not overflow a signed subtraction. */
static inline int64_t gpu_tsub(int64_t a, int64_t b)
{
    return (int64_t)((uint64_t)a - (uint64_t)b);
}

/* ns as nvprof prints a time: below 1 us an integer "992ns", else
 * `sig` significant digits with the largest unit of ns/us/ms/s that
 * keeps an integer part >= 1 ("1.1520us", "540.00us", "1.2880ms",
 * "12.345s"); negative values get a '-'.  sig is clamped to 1..9.
 * Returns buf. */
char *gpu_fmt_time(char *buf, int64_t ns, int sig);

/* Bytes as nvprof prints sizes: "256B" below 1 KB, else 5 significant
 * digits of KB/MB/GB/TB (powers of 1024): "4.0000MB". Returns buf. */
char *gpu_fmt_bytes(char *buf, uint64_t bytes);

/* Throughput of `bytes` moved in `ns`: "12.345GB/s" (powers of 1024,
 * like the sizes); "-" when ns <= 0. Returns buf. */
char *gpu_fmt_throughput(char *buf, uint64_t bytes, int64_t ns);

/* Fixed-point: v / 10^decimals printed with exactly `decimals` digits
 * after the point, rounded half away from zero ("-1.250").
 * decimals is clamped to 0..9. Returns buf. */
char *gpu_fmt_fixed(char *buf, int64_t v, uint64_t divisor, int decimals);

/* bytes moved in ns as a rate in units of `unit` bytes per second with
 * `decimals` digits ("1234.567" for MB/s with unit 1048576); "" when
 * ns <= 0 (no rate). Returns buf. */
char *gpu_fmt_rate(char *buf, uint64_t bytes, int64_t ns, uint64_t unit, int decimals);

/* Unsigned decimal. Returns a pointer to the first digit inside buf. */
char *gpu_fmt_u64(char *buf, uint64_t v);

/* "[CUDA memcpy HtoD]" etc. for a copy kind, "[CUDA memset]". */
const char *gpu_copy_name(trc_copy_kind k);
const char *gpu_memset_name(void);
/* "HtoD"; "Other" for unknown values. */
const char *gpu_copy_short(trc_copy_kind k);
/* "Pageable", "Pinned", "Device", ... nvprof's SrcMemType words; "-"
 * for unknown. */
const char *gpu_mem_name(trc_mem_kind k);
/* "Event", "Stream Wait Event", "Stream", "Context", "Unknown". */
const char *gpu_sync_name(trc_sync_kind k);

#endif
