/*
 * lib/export/common/name_pool.c — names as dense ids (contract in
 * name_pool.h), over the one interner and arena of lib/util.
 */
#include "lib/export/common/name_pool.h"

#include <string.h>

void name_pool_init(name_pool *p)
{
    memset(p, 0, sizeof *p);
}

void name_pool_cleanup(name_pool *p)
{
    trci_free(&p->map);
    trca_free_all(&p->arena);
    memset(p, 0, sizeof *p);
}

trc_status name_pool_intern(name_pool *p, const char *s, uint32_t *id)
{
    if (!s || !*s) {
        *id = 0;
        return TRC_OK;
    }
    unsigned slot = (unsigned)(((uintptr_t)s >> 4) & 15u);
    if (p->recent[slot] == s && strcmp(name_pool_str(p, p->recent_id[slot]), s) == 0) {
        *id = p->recent_id[slot];
        return TRC_OK;
    }
    size_t len = strlen(s);
    uint64_t h = trci_hash(s, len);
    uint32_t found;
    if (!trci_find(&p->map, s, len, h, &found)) {
        found = p->map.n + 1;
        trc_status st = trci_insert(&p->map, &p->arena, s, len, h, found, NULL);
        if (st != TRC_OK)
            return st;
    }
    p->recent[slot] = s;
    p->recent_id[slot] = found;
    *id = found;
    return TRC_OK;
}

uint32_t name_pool_len(const name_pool *p, uint32_t id)
{
    return id == 0 || id > p->map.n ? 0 : p->map.ents[id - 1].len;
}

const char *name_pool_str(const name_pool *p, uint32_t id)
{
    if (id == 0 || id > p->map.n)
        return "";
    return p->map.ents[id - 1].key;
}
