/*
 * lib/util/intern.h — content-addressed interning: a hash map from a byte key
 * (a string, or a packed tuple of ids) to a uint32_t value.  The writer
 * uses it to give equal strings/frames/stacks/threads one id per
 * segment; the reader uses it to give equal definitions from different
 * segments one reader-global id.
 *
 * Keys are copied into the caller's arena (stable, NUL-terminated after
 * the key bytes, so an interned string key doubles as its C string).
 * The entries sit in an array in insertion order, found through the
 * shared hash index (lib/util/hashtab.h).  Memory grows with distinct keys
 * only.  A zeroed struct is an empty map.
 */
#ifndef TRC_LIB_INTERN_H
#define TRC_LIB_INTERN_H

#include <stddef.h>
#include <stdint.h>

#include "trc/trc.h"
#include "lib/util/arena.h"
#include "lib/util/hashtab.h"

typedef struct trci_entry {
    const void *key;          /* in the arena */
    uint32_t len;
    uint32_t value;
} trci_entry;

typedef struct trci_map {
    trch_index index;
    trci_entry *ents;
    uint32_t n, cap;
} trci_map;

/* 64-bit hash of n bytes (trch_hash_bytes).  Cannot fail. */
static inline uint64_t trci_hash(const void *p, size_t n)
{
    return trch_hash_bytes(p, n);
}

/* Look key up.  Returns 1 and sets *value if present, else 0. */
int trci_find(const trci_map *m, const void *key, size_t len, uint64_t hash, uint32_t *value);

/* Insert a key known to be absent: copies it into arena a.  If stored is
 * not NULL it receives the stable copy.  TRC_OK, TRC_ERR_NOMEM (map
 * unchanged), TRC_ERR_LIMIT (key over 4 GiB or
 * past 2^30 keys). */
trc_status trci_insert(trci_map *m, trca_arena *a, const void *key, size_t len, uint64_t hash,
                       uint32_t value, const void **stored);

/* Change the value of a present key; returns 0 if absent. */
int trci_update(trci_map *m, const void *key, size_t len, uint64_t hash, uint32_t value);

void trci_free(trci_map *m);

#endif /* TRC_LIB_INTERN_H */
