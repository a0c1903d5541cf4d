/*
 * lib/export/nvvp_pool.h — a string interning pool for the GPU views.
 *
 * The GPU views buffer millions of activities until the end of input
 * (to sort them, or to know the time range to draw); each keeps its name
 * as a small id into this pool instead of a pointer, so no reader-owned
 * string has to outlive the event that carried it.
 *
 * Ids are dense from 1 in order of first appearance; id 0 is always the
 * empty string.  Memory comes from lib/util/alloc.h (so allocation failure
 * can be tested); strings live in append-only blocks and never move.
 */
#ifndef TRC_LIB_EXPORT_NVVP_POOL_H
#define TRC_LIB_EXPORT_NVVP_POOL_H

#include <stddef.h>
#include <stdint.h>

#include "trc/trc.h"
#include "lib/util/hashtab.h"

typedef struct nvvp_pool {
    char **strs;          /* id -> string (strs[0] = "") */
    uint32_t *lens;       /* id -> length in bytes (capped at UINT32_MAX) */
    uint32_t n, cap;      /* ids in use (including 0), capacity of strs */
    trch_index index;     /* string hash -> id (lib/util/hashtab.h) */
    void *blocks;         /* chain of storage blocks (first word = next) */
    /* Callers often pass the same pointer again (a reader's interned
     * string): a hit costs one strcmp instead of strlen + hash + strcmp. */
    const char *recent[16];
    uint32_t recent_id[16];
    char *free_at;        /* free space in the newest block */
    size_t free_len;
} nvvp_pool;

/* Start an empty pool. Cannot fail (allocates on first intern). */
void nvvp_pool_init(nvvp_pool *p);

/* Free everything the pool holds; the pool is empty afterwards. */
void nvvp_pool_cleanup(nvvp_pool *p);

/* Intern s (NULL counts as ""); *id receives its id. TRC_OK or
 * TRC_ERR_NOMEM (pool unchanged), TRC_ERR_LIMIT past 2^31 strings. */
trc_status nvvp_pool_intern(nvvp_pool *p, const char *s, uint32_t *id);

/* The string of an id (borrowed, valid until cleanup); "" for an id not
 * in the pool. Cannot fail. */
const char *nvvp_pool_str(const nvvp_pool *p, uint32_t id);

/* strlen of an id's string without scanning it; 0 for an unknown id. */
uint32_t nvvp_pool_len(const nvvp_pool *p, uint32_t id);

/* Number of ids in use, counting id 0. */
static inline uint32_t nvvp_pool_count(const nvvp_pool *p) { return p->n ? p->n : 1; }

#endif
