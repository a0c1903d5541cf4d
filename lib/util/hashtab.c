/*
 * lib/util/hashtab.c — the shared hash index and u64 map (see lib/util/hashtab.h).
 *
 * The byte hash reads 8 bytes at a time with a multiply and xor-shift per
 * word and a final avalanche: keys are short tuples of small integers or
 * identifier-like strings, for which this is fast and spreads well.
 */
#include "lib/util/hashtab.h"

#include <string.h>

#include "lib/util/alloc.h"

#define TRCH_FIRST_CAP 64u
#define TRCH_MAX_ENTRIES (UINT32_C(1) << 30)

uint64_t trch_hash_more(uint64_t seed, const void *p, size_t n)
{
    const uint8_t *b = p;
    uint64_t h = seed ^ (n * UINT64_C(0x100000001b3));
    uint64_t w;

    while (n >= 8) {
        memcpy(&w, b, 8);
        h = (h ^ w) * UINT64_C(0x9e3779b97f4a7c15);
        h ^= h >> 29;
        b += 8;
        n -= 8;
    }
    if (n) {
        w = 0;
        memcpy(&w, b, n);
        h = (h ^ w) * UINT64_C(0x9e3779b97f4a7c15);
    }
    return trch_mix64(h);
}

uint64_t trch_hash_bytes(const void *p, size_t n)
{
    return trch_hash_more(UINT64_C(0x9e3779b97f4a7c15), p, n);
}

/* Put a slot into a table known to have room and not to hold it. */
static void place(trch_slot *slots, uint32_t mask, trch_slot s)
{
    uint32_t i = s.hash & mask;
    while (slots[i].ref)
        i = (i + 1) & mask;
    slots[i] = s;
}

static trc_status rebuild(trch_index *t, uint32_t cap)
{
    trch_slot *slots = trc_calloc(cap, sizeof *slots);

    if (!slots)
        return TRC_ERR_NOMEM;
    for (uint32_t i = 0; t->slots && i <= t->mask; i++)
        if (t->slots[i].ref)
            place(slots, cap - 1, t->slots[i]);
    trc_free(t->slots);
    t->slots = slots;
    t->mask = cap - 1;
    return TRC_OK;
}

trc_status trch_reserve(trch_index *t, uint32_t n)
{
    uint32_t cap = t->slots ? t->mask + 1 : TRCH_FIRST_CAP;

    if (n > TRCH_MAX_ENTRIES)
        return TRC_ERR_LIMIT;
    while ((uint64_t)n * 2 > cap)
        cap *= 2;
    if (t->slots && cap == t->mask + 1)
        return TRC_OK;
    return rebuild(t, cap);
}

trc_status trch_add(trch_index *t, uint64_t hash, uint32_t entry)
{
    trch_slot s = {trch_fold(hash), entry + 1};

    if (entry == TRCH_NONE)
        return TRC_ERR_LIMIT;
    if (!t->slots || (uint64_t)(t->count + 1) * 2 > (uint64_t)t->mask + 1) {
        trc_status st = trch_reserve(t, t->count + 1);
        if (st != TRC_OK)
            return st;
    }
    place(t->slots, t->mask, s);
    t->count++;
    return TRC_OK;
}

int trch_remove(trch_index *t, uint64_t hash, uint32_t entry)
{
    uint32_t mask = t->mask, h = trch_fold(hash), i;

    if (!t->slots || entry == TRCH_NONE)
        return 0;
    for (i = h & mask; t->slots[i].ref != entry + 1; i = (i + 1) & mask)
        if (!t->slots[i].ref)
            return 0;
    t->slots[i].ref = 0;
    t->count--;
    /* Pull later members of the cluster back over the hole unless that
     * would put one before its home slot. */
    for (uint32_t j = (i + 1) & mask; t->slots[j].ref; j = (j + 1) & mask) {
        uint32_t home = t->slots[j].hash & mask;
        int between = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (!between) {
            t->slots[i] = t->slots[j];
            t->slots[j].ref = 0;
            i = j;
        }
    }
    return 1;
}

void trch_clear(trch_index *t)
{
    if (t->slots)
        memset(t->slots, 0, ((size_t)t->mask + 1) * sizeof *t->slots);
    t->count = 0;
}

void trch_index_cleanup(trch_index *t)
{
    trc_free(t->slots);
    memset(t, 0, sizeof *t);
}

trc_status trch_u64map_put(trch_u64map *m, uint64_t key, uint32_t val_if_new, uint32_t *val,
                           int *added)
{
    uint64_t h = trch_hash_u64(key);
    trch_probe p;
    trc_status st;

    *added = 0;
    for (uint32_t i = trch_first(&m->idx, h, &p); i != TRCH_NONE; i = trch_next(&m->idx, &p)) {
        if (m->keys[i] == key) {
            *val = m->vals[i];
            return TRC_OK;
        }
    }
    if (m->n == m->cap) {
        uint32_t cap = m->cap ? m->cap * 2 : 16;
        if (m->cap >= TRCH_MAX_ENTRIES)
            return TRC_ERR_LIMIT;
        uint64_t *keys = trc_realloc(m->keys, (size_t)cap * sizeof *keys);
        if (!keys)
            return TRC_ERR_NOMEM;
        m->keys = keys;
        uint32_t *vals = trc_realloc(m->vals, (size_t)cap * sizeof *vals);
        if (!vals)
            return TRC_ERR_NOMEM;
        m->vals = vals;
        m->cap = cap;
    }
    st = trch_add(&m->idx, h, m->n);
    if (st != TRC_OK)
        return st;
    m->keys[m->n] = key;
    m->vals[m->n] = val_if_new;
    m->n++;
    *val = val_if_new;
    *added = 1;
    return TRC_OK;
}

void trch_u64map_clear(trch_u64map *m)
{
    trch_clear(&m->idx);
    m->n = 0;
}

void trch_u64map_cleanup(trch_u64map *m)
{
    trch_index_cleanup(&m->idx);
    trc_free(m->keys);
    trc_free(m->vals);
    memset(m, 0, sizeof *m);
}
