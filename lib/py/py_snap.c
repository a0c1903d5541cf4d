/*
 * py_snap.c — batched, coalesced reads for one sample (py_snap.h).
 */
#include "lib/py/py_snap.h"

#include "lib/util/alloc.h"
#include "lib/util/grow.h"

#include <errno.h>
#include <string.h>

#define MERGE_GAP 4095u   /* below a page: merging never spans an unknown page */

void pysnap_init(pysnap *s, pymem *mem)
{
    memset(s, 0, sizeof *s);
    s->mem = mem;
}

void pysnap_cleanup(pysnap *s)
{
    trc_free(s->r);
    trc_free(s->buf);
    memset(s, 0, sizeof *s);
}

void pysnap_reset(pysnap *s)
{
    s->n = 0;
    s->used = 0;
    s->planned = 0;
    s->hard_errno = 0;
    s->batch = s->hint = 0;
    s->overlap = 0;
    pymem_new_sample(s->mem);
}

/* Room for need ranges.  0, or -1 when out of memory. */
static int grow_ranges(pysnap *s, int need)
{
    if ((size_t)need <= s->cap)
        return 0;
    return trcu_grow((void **)&s->r, &s->cap, (size_t)need - 1, sizeof *s->r) == TRC_OK ? 0 : -1;
}

/* Room for need bytes.  0, or -1 when out of memory.  The buffer starts
 * small on purpose: it then moves during the first samples, and a
 * walker keeping a pointer across a read would show up under the
 * sanitizers at once.  It never shrinks. */
static int grow_buf(pysnap *s, size_t need)
{
    if (need <= s->bufcap)
        return 0;
    return trcu_grow((void **)&s->buf, &s->bufcap, need - 1, 1) == TRC_OK ? 0 : -1;
}

void pysnap_plan_at(pysnap *s, uint64_t addr, size_t len, int place)
{
    if (addr == 0 || len == 0 || len > PYSNAP_MAX_RANGE || addr + len < addr)
        return;
    if (s->planned >= PYSNAP_MAX_PLAN || grow_ranges(s, s->n + 1) != 0)
        return;
    s->r[s->n++] = (pysnap_range){ .addr = addr, .len = (uint32_t)len, .state = 0, .whole = 0,
                                   .order = (uint32_t)place << 16 | (uint32_t)s->planned };
    s->planned++;
}

void pysnap_plan_piece(pysnap *s, uint64_t addr, size_t len, int place)
{
    int n = s->n;
    pysnap_plan_at(s, addr, len, place);
    if (s->n > n)
        s->r[n].whole = 1;
}

void pysnap_plan(pysnap *s, uint64_t addr, size_t len)
{
    pysnap_plan_at(s, addr, len, PYSNAP_MIDDLE);
}

/* Insertion sort, by address (by_order 0) or by reading order: plans are
 * short and mostly in order. */
static void sort_ranges(pysnap_range *r, int n, int by_order)
{
    for (int i = 1; i < n; i++) {
        pysnap_range x = r[i];
        int j = i;
        while (j > 0 && (by_order ? r[j - 1].order > x.order : r[j - 1].addr > x.addr)) {
            r[j] = r[j - 1];
            j--;
        }
        r[j] = x;
    }
}

/* Reads ranges [first, s->n) which must all be in state 0 and have
 * buffer space assigned.  Marks each 1 or 2. */
static int read_ranges(pysnap *s, int first)
{
    struct iovec l[PYSNAP_MAX_PLAN], r[PYSNAP_MAX_PLAN];
    int i = first;

    while (i < s->n) {
        int k = s->n - i < PYSNAP_MAX_PLAN ? s->n - i : PYSNAP_MAX_PLAN;
        for (int j = 0; j < k; j++) {
            pysnap_range *x = &s->r[i + j];
            l[j].iov_base = s->buf + x->off;
            l[j].iov_len = x->len;
            r[j].iov_base = (void *)(uintptr_t)x->addr;
            r[j].iov_len = x->len;
        }
        int got = pymem_readv(s->mem, l, r, k);
        if (got < 0) {
            s->hard_errno = errno ? errno : EIO;
            for (int j = i; j < s->n; j++)
                s->r[j].state = 2;
            return -1;
        }
        for (int j = 0; j < got; j++)
            s->r[i + j].state = 1;
        i += got;
        if (got < k)
            s->r[i++].state = 2;   /* the bad one; go on after it */
    }
    return 0;
}

int pysnap_fetch(pysnap *s)
{
    int first = 0;

    while (first < s->n && s->r[first].state != 0)
        first++;
    if (first == s->n)
        return 0;
    /* Planned ranges are always the tail: earlier ones were read. */
    pysnap_range *p = s->r + first;
    int np = s->n - first;
    sort_ranges(p, np, 0);
    s->planned = 0;
    s->overlap = 0;
    int w = 0;
    for (int i = 0; i < np; i++) {
        if (w > 0) {
            pysnap_range *last = &p[w - 1];
            uint64_t lend = last->addr + last->len, end = p[i].addr + p[i].len;
            if (p[i].addr < lend && (last->whole || p[i].whole))
                s->overlap = 1;   /* pieces are not merged: bytes read twice */
            /* Merge when the gap is under a page: every byte in between then
             * lies on a page that one of the two ranges touches. */
            if (!last->whole && !p[i].whole && p[i].addr <= lend + MERGE_GAP &&
                (end > lend ? end : lend) - last->addr <= PYSNAP_MAX_RANGE) {
                if (end > lend)
                    last->len = (uint32_t)(end - last->addr);
                if (p[i].order > last->order)
                    last->order = p[i].order;
                continue;
            }
        }
        p[w++] = p[i];
    }
    s->n = first + w;
    s->batch = first;   /* merged: disjoint */
    sort_ranges(p, w, 1);
    size_t need = s->used;
    for (int i = first; i < s->n; i++)
        need += s->r[i].len;
    if (grow_buf(s, need) != 0) {
        s->hard_errno = ENOMEM;
        s->n = first;
        return -1;
    }
    for (int i = first; i < s->n; i++) {
        s->r[i].off = s->used;
        s->used += s->r[i].len;
    }
    return read_ranges(s, first);
}

const void *pysnap_get_scan(const pysnap *s, uint64_t addr, size_t len)
{
    uint64_t end = addr + len;

    if (end < addr)
        return NULL;
    for (int i = s->n - 1; i >= 0; i--) {
        const pysnap_range *x = &s->r[i];
        if (x->state == 1 && x->addr <= addr && end <= x->addr + x->len) {
            /* only a cache: the pysnap itself is never const */
            ((pysnap *)s)->hint = i;
            return s->buf + x->off + (addr - x->addr);
        }
    }
    return NULL;
}

const void *pysnap_need(pysnap *s, uint64_t addr, size_t len, uint64_t lo)
{
    const void *got = pysnap_get(s, addr, len);

    if (got || addr == 0 || len == 0 || len > PYSNAP_MAX_RANGE || addr + len < addr)
        return got;
    if (lo > addr || addr + len - lo > PYSNAP_MAX_RANGE)
        lo = addr;
    if (grow_ranges(s, s->n + 1) != 0 || grow_buf(s, s->used + (addr + len - lo)) != 0) {
        s->hard_errno = ENOMEM;
        return NULL;
    }
    s->r[s->n] = (pysnap_range){ .addr = lo, .len = (uint32_t)(addr + len - lo), .state = 0, .whole = 0, .off = s->used };
    s->used += s->r[s->n].len;
    s->batch = s->n;
    s->overlap = 0;
    s->n++;
    if (read_ranges(s, s->n - 1) != 0)
        return NULL;
    return pysnap_get(s, addr, len);
}
