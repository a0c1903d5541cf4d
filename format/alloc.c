/*
 * format/alloc.c — allocation wrapper with an "fail the Nth call" hook
 * (see format/alloc.h).  The hook state is process-global on purpose:
 * it exists only so unit tests can walk every failure path.
 */
#include "format/alloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static long fail_at = -1;   /* allocation number that fails first; -1 = never */
static long n_calls;        /* allocations since the hook was set */
static size_t largest;      /* largest request since the hook was set */

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
    n_calls++;
    if (n > largest)
        largest = n;
    return fail_at > 0 && n_calls >= fail_at;
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
