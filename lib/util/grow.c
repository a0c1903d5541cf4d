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
