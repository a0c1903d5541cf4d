/*
 * lib/export/u64map.h — an open-addressing hash map from 64-bit keys to
 * dense 32-bit indices, for the aggregating exporters (collapsed, stats):
 * "(thread, stack id) → row", "(caller, callee) → edge".  The caller owns
 * the rows (a plain array indexed by the value); the map only finds them.
 *
 * Memory is proportional to the number of distinct keys.  All allocation
 * goes through format/alloc.h.
 */
#ifndef TRC_LIB_EXPORT_U64MAP_H
#define TRC_LIB_EXPORT_U64MAP_H

#include <stddef.h>
#include <stdint.h>

#include "trc/trc.h"

typedef struct exp_u64map {
    uint64_t *keys;
    uint32_t *vals;   /* value + 1; 0 = empty slot */
    size_t cap;       /* power of two, or 0 before the first insert */
    size_t n;
} exp_u64map;

/* Zero-initialised struct = empty map.  exp_u64map_cleanup frees it. */
void exp_u64map_cleanup(exp_u64map *m);

/* Finds key: returns 1 and sets *val, or 0.  Cannot fail. */
int exp_u64map_get(const exp_u64map *m, uint64_t key, uint32_t *val);

/* Finds key or inserts it with value `next` (the caller's next free row,
 * must be < UINT32_MAX).  *val gets the stored value, *added 1 if it was
 * inserted.  Returns TRC_OK or TRC_ERR_NOMEM (map unchanged). */
trc_status exp_u64map_put(exp_u64map *m, uint64_t key, uint32_t next, uint32_t *val,
                          int *added);

/* Grows a caller-owned array of rows so that index `need` fits: *arr has
 * *cap elements of size `size`; new elements are zeroed.  Returns TRC_OK
 * or TRC_ERR_NOMEM (array unchanged). */
trc_status exp_grow(void **arr, size_t *cap, size_t need, size_t size);

#endif /* TRC_LIB_EXPORT_U64MAP_H */
