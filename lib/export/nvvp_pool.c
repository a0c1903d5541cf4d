/*
 * lib/export/nvvp_pool.c — string interning for the GPU views (contract
 * in nvvp_pool.h).  FNV-1a hashes, an open-addressing table of ids kept
 * at most half full, strings copied into 64 KiB blocks.
 */
#include "lib/export/nvvp_pool.h"

#include <string.h>

#include "format/alloc.h"

#define POOL_BLOCK 65536u
#define POOL_MAX_IDS 0x7fffffffu

static char empty_string[1];

static uint32_t fnv1a(const char *s, size_t len)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 16777619u;
    }
    return h ? h : 1;
}

void nvvp_pool_init(nvvp_pool *p)
{
    memset(p, 0, sizeof *p);
}

void nvvp_pool_cleanup(nvvp_pool *p)
{
    void *b = p->blocks;
    while (b) {
        void *next;
        memcpy(&next, b, sizeof next);
        trc_free(b);
        b = next;
    }
    trc_free(p->strs);
    trc_free(p->hashes);
    trc_free(p->lens);
    trc_free(p->slots);
    memset(p, 0, sizeof *p);
}

/* Copy len bytes + NUL into block storage; NULL when out of memory. */
static char *pool_store(nvvp_pool *p, const char *s, size_t len)
{
    size_t need = len + 1;
    if (need > p->free_len) {
        size_t size = sizeof(void *) + (need > POOL_BLOCK ? need : POOL_BLOCK);
        char *b = trc_malloc(size);
        if (!b)
            return NULL;
        memcpy(b, &p->blocks, sizeof p->blocks);
        p->blocks = b;
        p->free_at = b + sizeof(void *);
        p->free_len = size - sizeof(void *);
    }
    char *dst = p->free_at;
    memcpy(dst, s, len);
    dst[len] = '\0';
    p->free_at += need;
    p->free_len -= need;
    return dst;
}

/* Rebuild the slot table at twice the size (or 1024 the first time). */
static trc_status pool_grow_slots(nvvp_pool *p)
{
    uint32_t nslots = p->nslots ? p->nslots * 2 : 1024;
    uint32_t *slots = trc_calloc(nslots, sizeof *slots);
    if (!slots)
        return TRC_ERR_NOMEM;
    for (uint32_t id = 1; id < p->n; id++) {
        uint32_t i = p->hashes[id] & (nslots - 1);
        while (slots[i])
            i = (i + 1) & (nslots - 1);
        slots[i] = id;
    }
    trc_free(p->slots);
    p->slots = slots;
    p->nslots = nslots;
    return TRC_OK;
}

static trc_status pool_grow_ids(nvvp_pool *p)
{
    uint32_t cap = p->cap ? p->cap * 2 : 256;
    char **strs = trc_realloc(p->strs, (size_t)cap * sizeof *strs);
    if (!strs)
        return TRC_ERR_NOMEM;
    p->strs = strs;
    uint32_t *hashes = trc_realloc(p->hashes, (size_t)cap * sizeof *hashes);
    if (!hashes)
        return TRC_ERR_NOMEM;
    p->hashes = hashes;
    uint32_t *lens = trc_realloc(p->lens, (size_t)cap * sizeof *lens);
    if (!lens)
        return TRC_ERR_NOMEM;
    p->lens = lens;
    if (p->n == 0) {
        p->strs[0] = empty_string;
        p->hashes[0] = 0;
        p->lens[0] = 0;
        p->n = 1;
    }
    p->cap = cap;
    return TRC_OK;
}

trc_status nvvp_pool_intern(nvvp_pool *p, const char *s, uint32_t *id)
{
    trc_status st;
    if (!s || !*s) {
        *id = 0;
        return TRC_OK;
    }
    unsigned slot = (unsigned)(((uintptr_t)s >> 4) & 15u);
    if (p->recent[slot] == s && strcmp(p->strs[p->recent_id[slot]], s) == 0) {
        *id = p->recent_id[slot];
        return TRC_OK;
    }
    size_t len = strlen(s);
    uint32_t h = fnv1a(s, len);
    if (p->nslots) {
        uint32_t i = h & (p->nslots - 1);
        while (p->slots[i]) {
            uint32_t cand = p->slots[i];
            if (p->hashes[cand] == h && strcmp(p->strs[cand], s) == 0) {
                *id = cand;
                p->recent[slot] = s;
                p->recent_id[slot] = cand;
                return TRC_OK;
            }
            i = (i + 1) & (p->nslots - 1);
        }
    }
    if (p->n >= POOL_MAX_IDS)
        return TRC_ERR_LIMIT;
    if (p->n >= p->cap && (st = pool_grow_ids(p)) != TRC_OK)
        return st;
    if ((uint64_t)(p->n + 1) * 2 > p->nslots && (st = pool_grow_slots(p)) != TRC_OK)
        return st;
    char *copy = pool_store(p, s, len);
    if (!copy)
        return TRC_ERR_NOMEM;
    uint32_t nid = p->n++;
    p->strs[nid] = copy;
    p->hashes[nid] = h;
    p->lens[nid] = len > UINT32_MAX ? UINT32_MAX : (uint32_t)len;
    uint32_t i = h & (p->nslots - 1);
    while (p->slots[i])
        i = (i + 1) & (p->nslots - 1);
    p->slots[i] = nid;
    p->recent[slot] = s;
    p->recent_id[slot] = nid;
    *id = nid;
    return TRC_OK;
}

uint32_t nvvp_pool_len(const nvvp_pool *p, uint32_t id)
{
    return id == 0 || id >= p->n ? 0 : p->lens[id];
}

const char *nvvp_pool_str(const nvvp_pool *p, uint32_t id)
{
    if (id == 0 || id >= p->n)
        return "";
    return p->strs[id];
}
