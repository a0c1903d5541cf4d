/*
 * lib/intern.c — hash map for interning (see lib/intern.h).
 *
 * The hash reads 8 bytes at a time and mixes with a multiply and
 * xor-shift per word, then a final avalanche; enough for keys that are
 * either short tuples of small integers or identifier-like strings.
 */
#include "lib/intern.h"

#include <string.h>

#include "format/alloc.h"

static uint64_t mix(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
}

uint64_t trci_hash(const void *p, size_t n)
{
    const uint8_t *b = p;
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ (n * 0x100000001b3ULL);
    uint64_t w;

    while (n >= 8) {
        memcpy(&w, b, 8);
        h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
        h ^= h >> 29;
        b += 8;
        n -= 8;
    }
    if (n) {
        w = 0;
        memcpy(&w, b, n);
        h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
    }
    h = mix(h);
    return h ? h : 1;
}

static trci_entry *slot_for(const trci_map *m, const void *key, size_t len, uint64_t hash)
{
    size_t i;

    if (!m->slots)
        return NULL;
    for (i = (size_t)hash & m->mask;; i = (i + 1) & m->mask) {
        trci_entry *e = &m->slots[i];
        if (e->hash == 0)
            return e;
        if (e->hash == hash && e->len == len && memcmp(e->key, key, len) == 0)
            return e;
    }
}

int trci_find(const trci_map *m, const void *key, size_t len, uint64_t hash, uint32_t *value)
{
    trci_entry *e = slot_for(m, key, len, hash ? hash : 1);

    if (!e || e->hash == 0)
        return 0;
    *value = e->value;
    return 1;
}

int trci_update(trci_map *m, const void *key, size_t len, uint64_t hash, uint32_t value)
{
    trci_entry *e = slot_for(m, key, len, hash ? hash : 1);

    if (!e || e->hash == 0)
        return 0;
    e->value = value;
    return 1;
}

static trc_status grow(trci_map *m)
{
    size_t cap = m->slots ? (m->mask + 1) * 2 : 64, i;
    trci_entry *s = trc_calloc(cap, sizeof *s);

    if (!s)
        return TRC_ERR_NOMEM;
    for (i = 0; m->slots && i <= m->mask; i++) {
        trci_entry *e = &m->slots[i];
        size_t j;
        if (e->hash == 0)
            continue;
        for (j = (size_t)e->hash & (cap - 1); s[j].hash; j = (j + 1) & (cap - 1))
            ;
        s[j] = *e;
    }
    trc_free(m->slots);
    m->slots = s;
    m->mask = cap - 1;
    return TRC_OK;
}

trc_status trci_insert(trci_map *m, trca_arena *a, const void *key, size_t len, uint64_t hash,
                       uint32_t value, const void **stored)
{
    trci_entry *e;
    char *copy;
    trc_status st;

    if (len > UINT32_MAX - 1)
        return TRC_ERR_LIMIT;
    if (hash == 0)
        hash = 1;
    if (!m->slots || (m->count + 1) * 4 > (m->mask + 1) * 3) {
        st = grow(m);
        if (st != TRC_OK)
            return st;
    }
    copy = trca_strndup(a, key, len);
    if (!copy)
        return TRC_ERR_NOMEM;
    e = slot_for(m, key, len, hash);
    e->hash = hash;
    e->key = copy;
    e->len = (uint32_t)len;
    e->value = value;
    m->count++;
    if (stored)
        *stored = copy;
    return TRC_OK;
}

void trci_free(trci_map *m)
{
    trc_free(m->slots);
    m->slots = NULL;
    m->mask = m->count = 0;
}
