/*
 * lib/util/grow.c — growth of arrays that gain one row at a time
 * (contract in grow.h): capacities double, new rows start zeroed.
 */
#include "lib/util/grow.h"

#include <string.h>

#include "lib/util/alloc.h"

trc_status trcu_grow(void **arr, size_t *cap, size_t need, size_t size)
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

trc_status trcu_grow32(void *arrp, uint32_t *cap, uint32_t need, size_t size)
{
    if (need < *cap)
        return TRC_OK;
    if (need >= UINT32_MAX / 2)
        return TRC_ERR_NOMEM; /* the doubled capacity would pass UINT32_MAX */
    size_t c = *cap;
    trc_status st = trcu_grow(arrp, &c, need, size);
    if (st == TRC_OK)
        *cap = (uint32_t)c;
    return st;
}
