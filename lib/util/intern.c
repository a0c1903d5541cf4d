/*
 * lib/util/intern.c — hash map for interning (see lib/util/intern.h): an entry
 * array in insertion order plus the shared hash index over it.
 */
#include "lib/util/intern.h"

#include <string.h>

#include "lib/util/alloc.h"

static trci_entry *lookup(const trci_map *m, const void *key, size_t len, uint64_t hash)
{
    trch_probe p;

    for (uint32_t i = trch_first(&m->index, hash, &p); i != TRCH_NONE;
         i = trch_next(&m->index, &p)) {
        trci_entry *e = &m->ents[i];
        if (e->len == len && memcmp(e->key, key, len) == 0)
            return e;
    }
    return NULL;
}

int trci_find(const trci_map *m, const void *key, size_t len, uint64_t hash, uint32_t *value)
{
    const trci_entry *e = lookup(m, key, len, hash);

    if (!e)
        return 0;
    *value = e->value;
    return 1;
}

int trci_update(trci_map *m, const void *key, size_t len, uint64_t hash, uint32_t value)
{
    trci_entry *e = lookup(m, key, len, hash);

    if (!e)
        return 0;
    e->value = value;
    return 1;
}

trc_status trci_insert(trci_map *m, trca_arena *a, const void *key, size_t len, uint64_t hash,
                       uint32_t value, const void **stored)
{
    char *copy;
    trc_status st;

    if (len > UINT32_MAX - 1)
        return TRC_ERR_LIMIT;
    if (m->n == m->cap) {
        uint32_t cap = m->cap ? m->cap * 2 : 64;
        trci_entry *ents;
        if (m->cap >= UINT32_C(1) << 30)
            return TRC_ERR_LIMIT;
        ents = trc_realloc(m->ents, (size_t)cap * sizeof *ents);
        if (!ents)
            return TRC_ERR_NOMEM;
        m->ents = ents;
        m->cap = cap;
    }
    /* Index first: it is the step that can fail without leaving the key
     * copied into the arena for nothing. */
    st = trch_reserve(&m->index, m->n + 1);
    if (st != TRC_OK)
        return st;
    copy = trca_strndup(a, key, len);
    if (!copy)
        return TRC_ERR_NOMEM;
    st = trch_add(&m->index, hash, m->n); /* cannot fail after the reserve */
    if (st != TRC_OK)
        return st;
    m->ents[m->n].key = copy;
    m->ents[m->n].len = (uint32_t)len;
    m->ents[m->n].value = value;
    m->n++;
    if (stored)
        *stored = copy;
    return TRC_OK;
}

void trci_free(trci_map *m)
{
    trch_index_cleanup(&m->index);
    trc_free(m->ents);
    memset(m, 0, sizeof *m);
}
