/*
 * lib/util/hashtab.h — the one open-addressing hash index of libtrc, the hash
 * functions every table uses, and a typed 64-bit-key map built on them.
 *
 * trch_index maps a 64-bit hash to uint32_t entry indices.  The entries
 * themselves stay in the caller's own array (so the caller keeps
 * insertion order, dense ids and whatever key layout it likes); the index
 * only answers "which entries might have this hash".  Each slot keeps 32
 * bits of the hash next to the entry index, so probing skips most
 * non-matching entries without touching the caller's array, and growing
 * never calls back into the caller.
 *
 *   trch_probe p;
 *   for (uint32_t i = trch_first(&t, h, &p); i != TRCH_NONE; i = trch_next(&t, &p))
 *       if (equal(&ents[i], key))
 *           return i;                        (found)
 *   ... append the new entry at index n, then trch_add(&t, h, n)
 *
 * Linear probing, at most half full, capacity a power of two (64 at
 * first); deletion by backward shift (no tombstones).  A zeroed struct is
 * an empty index.  All memory comes from lib/util/alloc.h; nothing aborts.
 * Not thread-safe.
 */
#ifndef TRC_LIB_HASHTAB_H
#define TRC_LIB_HASHTAB_H

#include <stddef.h>
#include <stdint.h>

#include "trc/trc.h"

#define TRCH_NONE UINT32_MAX

/* ---- hashing -------------------------------------------------------- */

/* Full avalanche of a 64-bit value (a bijection).  Cannot fail. */
static inline uint64_t trch_mix64(uint64_t h)
{
    h ^= h >> 33;
    h *= UINT64_C(0xff51afd7ed558ccd);
    h ^= h >> 33;
    h *= UINT64_C(0xc4ceb9fe1a85ec53);
    h ^= h >> 33;
    return h;
}

/* Fold a 64-bit value into a running hash: one multiply and a shift,
 * cheap enough for per-event lookups (the index mixes the high half into
 * the bits it uses, trch_fold).  The seed is a previous hash or any
 * constant to start.  Cannot fail. */
static inline uint64_t trch_hash_more_u64(uint64_t seed, uint64_t v)
{
    uint64_t h = (seed ^ v) * UINT64_C(0x9e3779b97f4a7c15);
    return h ^ (h >> 29);
}

/* Hash of a 64-bit key (ids, packed id pairs, pids, addresses). */
static inline uint64_t trch_hash_u64(uint64_t v)
{
    return trch_hash_more_u64(UINT64_C(0x2545f4914f6cdd1d), v);
}

/* Hash of n bytes, 8 at a time.  Cannot fail. */
uint64_t trch_hash_bytes(const void *p, size_t n);

/* Fold more data into a running hash: the seed is a previous hash (or
 * any constant to start), so keys made of several parts (strings, then
 * numbers) hash without being copied into one buffer.  Cannot fail. */
uint64_t trch_hash_more(uint64_t seed, const void *p, size_t n);

/* ---- the index ------------------------------------------------------ */

typedef struct trch_slot {
    uint32_t hash;            /* 32 bits of the entry's hash */
    uint32_t ref;             /* entry index + 1; 0 = empty slot */
} trch_slot;

typedef struct trch_index {
    trch_slot *slots;         /* NULL until the first trch_add */
    uint32_t mask;            /* capacity - 1 */
    uint32_t count;           /* entries indexed */
} trch_index;

/* A lookup in progress: where it stands and the hash it follows. */
typedef struct trch_probe {
    uint32_t pos;
    uint32_t hash;
} trch_probe;

static inline uint32_t trch_fold(uint64_t h)
{
    return (uint32_t)(h ^ (h >> 32));
}

/* Scans from p->pos for the next slot whose stored hash matches. */
static inline uint32_t trch_scan(const trch_index *t, trch_probe *p)
{
    for (;; p->pos = (p->pos + 1) & t->mask) {
        const trch_slot *s = &t->slots[p->pos];
        if (!s->ref)
            return TRCH_NONE;
        if (s->hash == p->hash)
            return s->ref - 1;
    }
}

/* First entry index whose hash matches (the caller compares keys), or
 * TRCH_NONE.  Cannot fail.  The probe is valid until the index changes. */
static inline uint32_t trch_first(const trch_index *t, uint64_t hash, trch_probe *p)
{
    p->hash = trch_fold(hash);
    if (!t->slots)
        return TRCH_NONE;
    p->pos = p->hash & t->mask;
    return trch_scan(t, p);
}

/* Next candidate after the one trch_first/trch_next returned last. */
static inline uint32_t trch_next(const trch_index *t, trch_probe *p)
{
    p->pos = (p->pos + 1) & t->mask;
    return trch_scan(t, p);
}

/* Index entry `entry` (< UINT32_MAX) under hash; the caller has checked
 * its key is absent (equal keys would both be indexed).  Grows first when
 * half full.  TRC_OK, TRC_ERR_NOMEM or TRC_ERR_LIMIT (past 2^30 entries);
 * on failure the index is unchanged. */
trc_status trch_add(trch_index *t, uint64_t hash, uint32_t entry);

/* Make room for n entries in all so that the next adds cannot fail.
 * TRC_OK, TRC_ERR_NOMEM or TRC_ERR_LIMIT (index unchanged). */
trc_status trch_reserve(trch_index *t, uint32_t n);

/* Remove entry `entry`, indexed under hash, keeping every probe chain
 * unbroken.  Returns 1 if it was indexed, else 0.  Cannot fail. */
int trch_remove(trch_index *t, uint64_t hash, uint32_t entry);

/* Forget every entry but keep the memory.  Cannot fail. */
void trch_clear(trch_index *t);

/* Free the slots; the index is empty (and reusable) afterwards. */
void trch_index_cleanup(trch_index *t);

/* ---- a map from 64-bit keys to 32-bit values ------------------------ */

typedef struct trch_u64map {
    trch_index idx;
    uint64_t *keys;           /* entry order: keys[i], vals[i] */
    uint32_t *vals;
    uint32_t n, cap;
} trch_u64map;

/* Finds key: returns 1 and sets *val, or 0.  Cannot fail. */
static inline int trch_u64map_get(const trch_u64map *m, uint64_t key, uint32_t *val)
{
    trch_probe p;
    for (uint32_t i = trch_first(&m->idx, trch_hash_u64(key), &p); i != TRCH_NONE;
         i = trch_next(&m->idx, &p)) {
        if (m->keys[i] == key) {
            *val = m->vals[i];
            return 1;
        }
    }
    return 0;
}

/* Finds key, or inserts it with value `val_if_new`.  *val gets the stored
 * value and *added is 1 if the key was inserted.  TRC_OK, TRC_ERR_NOMEM
 * or TRC_ERR_LIMIT (map unchanged). */
trc_status trch_u64map_put(trch_u64map *m, uint64_t key, uint32_t val_if_new, uint32_t *val,
                           int *added);

/* Number of keys; keys are m->keys[0 .. n-1] in insertion order. */
static inline uint32_t trch_u64map_count(const trch_u64map *m)
{
    return m->n;
}

/* Forget every key but keep the memory, so that refilling the map up to
 * its former size allocates nothing.  Cannot fail. */
void trch_u64map_clear(trch_u64map *m);

/* Free the map; a zeroed struct is an empty map, and so is this one
 * afterwards. */
void trch_u64map_cleanup(trch_u64map *m);

#endif /* TRC_LIB_HASHTAB_H */
