/*
 * lib/util/arena.h — a block arena: many small allocations that live until
 * the owner is freed, at stable addresses (the reader's model hands out
 * borrowed pointers that must stay valid until trc_reader_free).
 *
 * Contract: zero-initialise a trca_arena; trca_alloc returns 8-byte
 * aligned zeroed memory or NULL on allocation failure; trca_free_all
 * releases everything at once.  Nothing is freed individually.
 */
#ifndef TRC_LIB_ARENA_H
#define TRC_LIB_ARENA_H

#include <stddef.h>

typedef struct trca_block trca_block;

typedef struct trca_arena {
    trca_block *head;         /* block being filled; others behind it */
    size_t used;              /* bytes used in head */
    size_t total;             /* bytes handed out, for statistics */
} trca_arena;

void *trca_alloc(trca_arena *a, size_t n);
/* Copy n bytes and append a NUL; the result is a C string. */
char *trca_strndup(trca_arena *a, const char *s, size_t n);
void trca_free_all(trca_arena *a);

#endif /* TRC_LIB_ARENA_H */
