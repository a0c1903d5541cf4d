/*
 * lib/util/alloc.c — allocation wrapper with an "fail the Nth call" hook
 * (see lib/util/alloc.h).  The hook state is process-global on purpose:
 * it exists only so unit tests can walk every failure path.
 */
#include "lib/util/alloc.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Atomic (relaxed) because the CUPTI injection allocates from several
 * threads at once; the counts only need to be exact in single-threaded tests. */
static _Atomic long fail_at = -1;   /* allocation number that fails first; -1 = never */
static _Atomic long n_calls;        /* allocations since the hook was set */
static _Atomic size_t largest;      /* largest request since the hook was set */

void trc_alloc_fail_after(long n)
{
    fail_at = n < 0 ? -1 : (n == 0 ? 1 : n);
    n_calls = 0;
    largest = 0;
}

size_t trc_alloc_largest(void)
{
    return largest;
}

long trc_alloc_count(void)
{
    return n_calls;
}

/* One more allocation attempt of n bytes: nonzero if it must fail. */
static int should_fail(size_t n)
{
    long k = atomic_fetch_add_explicit(&n_calls, 1, memory_order_relaxed) + 1;
    size_t big = atomic_load_explicit(&largest, memory_order_relaxed);
    while (n > big &&
           !atomic_compare_exchange_weak_explicit(&largest, &big, n, memory_order_relaxed,
                                                  memory_order_relaxed))
        ;
    long at = atomic_load_explicit(&fail_at, memory_order_relaxed);
    return at > 0 && k >= at;
}

void *trc_malloc(size_t n)
{
    if (should_fail(n))
        return NULL;
    return malloc(n ? n : 1);
}

void *trc_calloc(size_t n, size_t size)
{
    if (should_fail(size && n > SIZE_MAX / size ? SIZE_MAX : n * size))
        return NULL;
    if (n == 0 || size == 0)
        return calloc(1, 1);
    return calloc(n, size);
}

void *trc_realloc(void *p, size_t n)
{
    if (should_fail(n))
        return NULL;
    return realloc(p, n ? n : 1);
}

void trc_free(void *p)
{
    free(p);
}

char *trc_strndup(const char *s, size_t n)
{
    size_t len = strnlen(s, n);
    char *d = trc_malloc(len + 1);
    if (!d)
        return NULL;
    memcpy(d, s, len);
    d[len] = '\0';
    return d;
}

char *trc_strdup(const char *s)
{
    return trc_strndup(s, strlen(s));
}
