/*
 * lib/util/arena.c — block arena (see lib/util/arena.h).  Blocks are 64 KiB; an
 * allocation over a quarter block gets a block of its own, linked behind
 * the head so the head's free space is not wasted.
 */
#include "lib/util/arena.h"

#include <stdint.h>
#include <string.h>

#include "lib/util/alloc.h"

#define BLOCK_SIZE (64u * 1024u)

struct trca_block {
    trca_block *next;
    size_t size;
    max_align_t data[];
};

static trca_block *new_block(size_t size)
{
    trca_block *b;

    if (size > SIZE_MAX - sizeof *b)
        return NULL;
    b = trc_malloc(sizeof *b + size);
    if (!b)
        return NULL;
    b->next = NULL;
    b->size = size;
    return b;
}

void *trca_alloc(trca_arena *a, size_t n)
{
    trca_block *b;
    void *p;

    n = (n + 7) & ~(size_t)7;
    if (n == 0)
        n = 8;
    if (n > BLOCK_SIZE / 4) {
        b = new_block(n);
        if (!b)
            return NULL;
        if (a->head) {
            b->next = a->head->next;
            a->head->next = b;
        } else {
            a->head = b;
            a->used = n;
        }
        a->total += n;
        memset(b->data, 0, n);
        return b->data;
    }
    if (!a->head || a->head->size - a->used < n) {
        b = new_block(BLOCK_SIZE);
        if (!b)
            return NULL;
        b->next = a->head;
        a->head = b;
        a->used = 0;
    }
    p = (char *)a->head->data + a->used;
    a->used += n;
    a->total += n;
    memset(p, 0, n);
    return p;
}

char *trca_strndup(trca_arena *a, const char *s, size_t n)
{
    char *d;

    if (n == SIZE_MAX)
        return NULL;
    d = trca_alloc(a, n + 1);
    if (!d)
        return NULL;
    if (n)
        memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

void trca_free_all(trca_arena *a)
{
    trca_block *b = a->head;

    while (b) {
        trca_block *next = b->next;
        trc_free(b);
        b = next;
    }
    a->head = NULL;
    a->used = a->total = 0;
}
