/*
 * lib/export/u64map.c — see u64map.h.  Linear probing, load factor at
 * most 1/2, Fibonacci hashing (keys are small dense ids packed in pairs,
 * so the multiplication spreads them over the high bits).
 */
#include "lib/export/u64map.h"

#include <string.h>

#include "format/alloc.h"

static size_t slot_of(uint64_t key, size_t cap)
{
    return (size_t)((key * UINT64_C(0x9E3779B97F4A7C15)) >> 32) & (cap - 1);
}

void exp_u64map_cleanup(exp_u64map *m)
{
    trc_free(m->keys);
    trc_free(m->vals);
    memset(m, 0, sizeof *m);
}

int exp_u64map_get(const exp_u64map *m, uint64_t key, uint32_t *val)
{
    if (!m->cap)
        return 0;
    for (size_t i = slot_of(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
        if (!m->vals[i])
            return 0;
        if (m->keys[i] == key) {
            *val = m->vals[i] - 1;
            return 1;
        }
    }
}

static trc_status rehash(exp_u64map *m, size_t cap)
{
    uint64_t *keys = trc_malloc(cap * sizeof *keys);
    uint32_t *vals = trc_calloc(cap, sizeof *vals);
    if (!keys || !vals) {
        trc_free(keys);
        trc_free(vals);
        return TRC_ERR_NOMEM;
    }
    for (size_t j = 0; j < m->cap; j++) {
        if (!m->vals[j])
            continue;
        size_t i = slot_of(m->keys[j], cap);
        while (vals[i])
            i = (i + 1) & (cap - 1);
        keys[i] = m->keys[j];
        vals[i] = m->vals[j];
    }
    trc_free(m->keys);
    trc_free(m->vals);
    m->keys = keys;
    m->vals = vals;
    m->cap = cap;
    return TRC_OK;
}

trc_status exp_u64map_put(exp_u64map *m, uint64_t key, uint32_t next, uint32_t *val,
                          int *added)
{
    *added = 0;
    if (exp_u64map_get(m, key, val))
        return TRC_OK;
    if ((m->n + 1) * 2 > m->cap) {
        trc_status st = rehash(m, m->cap ? m->cap * 2 : 64);
        if (st != TRC_OK)
            return st;
    }
    size_t i = slot_of(key, m->cap);
    while (m->vals[i])
        i = (i + 1) & (m->cap - 1);
    m->keys[i] = key;
    m->vals[i] = next + 1;
    m->n++;
    *val = next;
    *added = 1;
    return TRC_OK;
}

trc_status exp_grow(void **arr, size_t *cap, size_t need, size_t size)
{
    if (need < *cap)
        return TRC_OK;
    size_t n = *cap ? *cap : 16;
    while (n <= need) {
        if (n > SIZE_MAX / 2 / size)
            return TRC_ERR_NOMEM;
        n *= 2;
    }
    char *p = trc_realloc(*arr, n * size);
    if (!p)
        return TRC_ERR_NOMEM;
    memset(p + *cap * size, 0, (n - *cap) * size);
    *arr = p;
    *cap = n;
    return TRC_OK;
}
