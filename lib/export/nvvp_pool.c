/*
 * lib/export/nvvp_pool.c — string interning for the GPU views (contract
 * in nvvp_pool.h).  Ids are found through the shared hash index
 * (lib/util/hashtab.h); strings are copied into 64 KiB blocks.
 */
#include "lib/export/nvvp_pool.h"

#include <string.h>

#include "lib/util/alloc.h"

#define POOL_BLOCK 65536u
#define POOL_MAX_IDS 0x7fffffffu

static char empty_string[1];

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
    trc_free(p->lens);
    trch_index_cleanup(&p->index);
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

static trc_status pool_grow_ids(nvvp_pool *p)
{
    uint32_t cap = p->cap ? p->cap * 2 : 256;
    char **strs = trc_realloc(p->strs, (size_t)cap * sizeof *strs);
    if (!strs)
        return TRC_ERR_NOMEM;
    p->strs = strs;
    uint32_t *lens = trc_realloc(p->lens, (size_t)cap * sizeof *lens);
    if (!lens)
        return TRC_ERR_NOMEM;
    p->lens = lens;
    if (p->n == 0) {
        p->strs[0] = empty_string;
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
    uint64_t h = trch_hash_bytes(s, len);
    trch_probe pr;
    for (uint32_t cand = trch_first(&p->index, h, &pr); cand != TRCH_NONE;
         cand = trch_next(&p->index, &pr)) {
        if (p->lens[cand] == len && memcmp(p->strs[cand], s, len) == 0) {
            *id = cand;
            p->recent[slot] = s;
            p->recent_id[slot] = cand;
            return TRC_OK;
        }
    }
    if (p->n >= POOL_MAX_IDS)
        return TRC_ERR_LIMIT;
    if (p->n >= p->cap && (st = pool_grow_ids(p)) != TRC_OK)
        return st;
    if ((st = trch_reserve(&p->index, p->n)) != TRC_OK)
        return st;
    char *copy = pool_store(p, s, len);
    if (!copy)
        return TRC_ERR_NOMEM;
    uint32_t nid = p->n;
    if ((st = trch_add(&p->index, h, nid)) != TRC_OK) /* cannot fail after the reserve */
        return st;
    p->n++;
    p->strs[nid] = copy;
    p->lens[nid] = len > UINT32_MAX ? UINT32_MAX : (uint32_t)len;
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
