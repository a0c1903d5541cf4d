/*
 * lib/util/grow.h — the one grow-an-array helper of libtrc.
 *
 * Arrays that grow one row at a time (the exporters' aggregation rows,
 * the writer's definition tables, the decoder's record lists) double
 * their capacity so that appending stays amortised O(1), and start new
 * rows zeroed so that a row is valid before the caller fills it.
 */
#ifndef TRC_LIB_UTIL_GROW_H
#define TRC_LIB_UTIL_GROW_H

#include <stddef.h>
#include <stdint.h>

#include "trc/trc.h"

/* Make *arr (capacity *cap rows of size bytes) hold at least need + 1
 * rows, so that row need may be written.  New rows are zeroed.  TRC_OK,
 * or TRC_ERR_NOMEM with *arr and *cap unchanged. */
trc_status trcu_grow(void **arr, size_t *cap, size_t need, size_t size);

/* trcu_grow for arrays counted in 32 bits (the exporters index rows by
 * the reader's 32-bit ids): arrp is the address of the array pointer,
 * *cap its capacity.  Also TRC_ERR_NOMEM, array untouched, when need is
 * UINT32_MAX / 2 or more, so that neither the capacity nor a count of
 * need + 1 rows can wrap. */
trc_status trcu_grow32(void *arrp, uint32_t *cap, uint32_t need, size_t size);

#endif /* TRC_LIB_UTIL_GROW_H */
