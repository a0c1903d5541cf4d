/*
 * lib/export/common/name_pool.h — names (kernels, API calls, copies,
 * markers) as small dense ids, for the exporters that keep GPU records
 * until the end of input (the nvvp views) or pair them (gpu_callsite.c).
 *
 * Those exporters buffer millions of activities (to sort them, or to
 * know the time range to draw); each keeps its name as an id into this
 * pool instead of a pointer, so no reader-owned string has to outlive
 * the event that carried it.
 *
 * Ids are dense from 1 in order of first appearance; id 0 is always the
 * empty string.  The strings are the interner's (lib/util/intern.h)
 * copies in one arena (lib/util/arena.h): they never move.
 */
#ifndef TRC_LIB_EXPORT_COMMON_NAME_POOL_H
#define TRC_LIB_EXPORT_COMMON_NAME_POOL_H

#include <stddef.h>
#include <stdint.h>

#include "trc/trc.h"
#include "lib/util/arena.h"
#include "lib/util/intern.h"

typedef struct name_pool {
    trci_map map;         /* string -> id; entry i holds id i + 1 */
    trca_arena arena;     /* the strings */
    /* Callers often pass the same pointer again (a reader's interned
     * string): a hit costs one strcmp instead of strlen + hash + strcmp. */
    const char *recent[16];
    uint32_t recent_id[16];
} name_pool;

/* Start an empty pool. Cannot fail (allocates on first intern). */
void name_pool_init(name_pool *p);

/* Free everything the pool holds; the pool is empty afterwards. */
void name_pool_cleanup(name_pool *p);

/* Intern s (NULL counts as ""); *id receives its id. TRC_OK or
 * TRC_ERR_NOMEM (pool unchanged), TRC_ERR_LIMIT past the interner's
 * 2^30 strings. */
trc_status name_pool_intern(name_pool *p, const char *s, uint32_t *id);

/* The string of an id (borrowed, valid until cleanup); "" for an id not
 * in the pool. Cannot fail. */
const char *name_pool_str(const name_pool *p, uint32_t id);

/* strlen of an id's string without scanning it; 0 for an unknown id. */
uint32_t name_pool_len(const name_pool *p, uint32_t id);

/* Number of ids in use, counting id 0. */
static inline uint32_t name_pool_count(const name_pool *p) { return p->map.n + 1; }

#endif
