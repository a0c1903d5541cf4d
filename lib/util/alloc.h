/*
 * lib/util/alloc.h — the one allocation wrapper used by format/ and lib/.
 *
 * Every allocation in libtrc goes through these functions so that tests
 * can make the Nth allocation fail (trc_alloc_fail_after) and check that
 * each failure path reports TRC_ERR_NOMEM without leaking or crashing.
 * Semantics match the C library functions; none of them aborts or prints.
 */
#ifndef TRC_FORMAT_ALLOC_H
#define TRC_FORMAT_ALLOC_H

#include <stddef.h>

/* malloc/calloc/realloc/free with the failure hook.  Return NULL on
 * failure (and for trc_realloc the old block is untouched).  trc_malloc(0)
 * returns a unique non-NULL pointer or NULL like malloc. */
void *trc_malloc(size_t n);
void *trc_calloc(size_t n, size_t size);
void *trc_realloc(void *p, size_t n);
void trc_free(void *p);

/* Copy of a NUL-terminated string (caller frees with trc_free); NULL on
 * failure.  trc_strndup copies at most n bytes and always terminates. */
char *trc_strdup(const char *s);
char *trc_strndup(const char *s, size_t n);

/* Test hook: the n-th allocation from now (n >= 1; counting malloc,
 * calloc, realloc and strdup calls) fails, and so does every later one
 * until the hook is reset; n = -1 disables failures.  n = 0 makes the next
 * allocation fail too (same as 1).  Not thread-safe: tests only. */
void trc_alloc_fail_after(long n);

/* Allocations attempted since the last trc_alloc_fail_after() call. */
long trc_alloc_count(void);

/* Largest single request (bytes) since the last trc_alloc_fail_after()
 * call: lets tests check that a hostile length was refused before
 * anything of its size was allocated. */
size_t trc_alloc_largest(void);

#endif /* TRC_FORMAT_ALLOC_H */
