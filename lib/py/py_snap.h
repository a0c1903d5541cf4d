/*
 * py_snap.h — one sample's view of the target's memory: a set of ranges
 * copied into a local buffer, filled by as few read calls as possible.
 *
 * A sample plans the ranges it expects to need (what the previous sample
 * of the same thread used: thread state, frame window, code objects),
 * fetches them in one batched read (neighbours coalesced), then walks
 * with pysnap_get(); whatever was not foreseen is read on demand with
 * pysnap_need().  The copies are consistent to within one system call,
 * which narrows (but cannot close) the window for torn reads: the
 * walker still validates everything it reads.
 */
#ifndef TRC_LIB_PY_SNAP_H
#define TRC_LIB_PY_SNAP_H

#include "lib/py/py_mem.h"

#include <stddef.h>
#include <stdint.h>

#define PYSNAP_MAX_PLAN 256     /* planned ranges per fetch */
#define PYSNAP_MAX_RANGE 65536  /* bytes per range */

typedef struct pysnap_range {
    uint64_t addr;
    uint32_t len;
    uint32_t state;   /* 0 planned, 1 copied, 2 unreadable */
    uint32_t order;   /* when it is read within its batch: pysnap_plan_at */
    uint32_t whole;   /* never merged with a neighbour: pysnap_plan_piece */
    size_t off;       /* into buf */
} pysnap_range;

typedef struct pysnap {
    pymem *mem;
    pysnap_range *r;
    int n;
    size_t cap;       /* ranges r has room for */
    int planned;      /* ranges planned since the last fetch */
    uint8_t *buf;
    size_t used, bufcap;
    int hard_errno;   /* EPERM/ESRCH seen by the last read, else 0 */
    int batch;        /* first range of the newest read: [batch, n) are disjoint */
    int hint;         /* the range pysnap_get found last (a guess to check) */
    int overlap;      /* the newest read copied some bytes twice (pieces) */
} pysnap;

void pysnap_init(pysnap *s, pymem *mem);
void pysnap_cleanup(pysnap *s);

/* Forgets every range (keeps the memory).  Cannot fail. */
void pysnap_reset(pysnap *s);

/* Adds [addr, addr+len) to the next fetch.  Silently ignored when the
 * plan is full or the range is absurd (the walker then reads on demand).
 * Plan only between pysnap_reset and pysnap_fetch.  Cannot fail. */
void pysnap_plan(pysnap *s, uint64_t addr, size_t len);

/* When a planned range is read within its batch (pysnap_plan_at): a
 * batch is one system call, but the kernel copies its ranges one after
 * the other while the target runs on, so the order decides which
 * changes a walk can be fooled by (py_walk.c says which order each
 * layout wants and why). */
enum {
    PYSNAP_FIRST = 0,   /* what does not change under us (code objects) */
    PYSNAP_EARLY = 1,   /* before the frames */
    PYSNAP_MIDDLE = 2,  /* frames, in the order planned (pysnap_plan's default) */
    PYSNAP_LATE = 3,    /* after the frames */
};

/* pysnap_plan, read at the given place in its batch; ranges of one
 * place are read in the order they were planned. */
void pysnap_plan_at(pysnap *s, uint64_t addr, size_t len, int place);

/* pysnap_plan_at for a range that is never merged with its neighbours,
 * so that a larger region planned as pieces is read in the pieces'
 * order, not as one copy from its low end up. */
void pysnap_plan_piece(pysnap *s, uint64_t addr, size_t len, int place);

/* Reads every planned range: sorted, neighbours closer than 2 KiB merged
 * (never across a page that neither touches, so no unmapped hole is
 * read), one system call in the order pysnap_plan_at asked for (a
 * merged range is read where its latest part asks); an unreadable range costs one more call for
 * the ranges after it.  Returns 0, or -1 on a hard error (hard_errno is
 * EPERM, ESRCH or ENOMEM). */
int pysnap_fetch(pysnap *s);

/* pysnap_get without its first guess (below). */
const void *pysnap_get_scan(const pysnap *s, uint64_t addr, size_t len);

/* Local copy of [addr, addr+len) if it lies inside one copied range
 * (the newest such), else NULL.  Cannot fail.  The range found last is
 * tried first (a walk reads one range many times in a row): when it
 * belongs to the newest read, whose ranges are disjoint, no newer range
 * can hold addr, so the answer is the full scan's.  Pieces planned
 * inside other pieces (py_plan.c's newest frames) make a read's ranges
 * overlap; then the full scan finds the copy made last. */
static inline const void *pysnap_get(const pysnap *s, uint64_t addr, size_t len)
{
    uint64_t end = addr + len;
    int h = s->hint;

    if (!s->overlap && h >= s->batch && h < s->n && end >= addr) {
        const pysnap_range *x = &s->r[h];
        if (x->state == 1 && x->addr <= addr && end <= x->addr + x->len)
            return s->buf + x->off + (addr - x->addr);
    }
    return pysnap_get_scan(s, addr, len);
}

/* Like pysnap_get, and when missing reads it now, starting at lo
 * (lo <= addr; the caller knows [lo, addr) is mapped, e.g. the rest of
 * a frame chunk or addr's own page) so that neighbours come along.
 * NULL when unreadable (hard_errno set for EPERM/ESRCH/ENOMEM). */
const void *pysnap_need(pysnap *s, uint64_t addr, size_t len, uint64_t lo);

/* Reads one range exactly, on demand. */
static inline const void *pysnap_need_exact(pysnap *s, uint64_t addr, size_t len)
{
    return pysnap_need(s, addr, len, addr);
}

/* Start of addr's page: always as mapped as addr itself. */
static inline uint64_t pysnap_page(uint64_t addr)
{
    return addr & ~(uint64_t)4095;
}

/* Helpers for little-endian fields inside a copied range. */
static inline uint64_t pysnap_u64(const void *base, uint32_t off)
{
    uint64_t v;
    __builtin_memcpy(&v, (const char *)base + off, sizeof v);
    return v;
}

static inline uint32_t pysnap_u32(const void *base, uint32_t off)
{
    uint32_t v;
    __builtin_memcpy(&v, (const char *)base + off, sizeof v);
    return v;
}

#endif
