/*
 * py_names.c — the threading module's names of threads, read from
 * outside the process (py_proc_thread_name; docs/design/cpython.md §10).
 *
 * Path, for every interpreter:
 *   interpreter -> sys.modules (modules ≤3.11, imports.modules 3.12+)
 *   -> "threading" (a module: its dict at PyModule_Type.tp_dictoffset)
 *   -> "_active" (ident -> Thread) and "_limbo" (Thread -> Thread)
 *   -> each Thread's instance attributes "_name" (str) and "_native_id"
 *      (int, the kernel tid: threading sets it on Linux for every thread
 *      it starts or adopts, MainThread and Dummy-N included, before the
 *      thread enters _active).  Threads are matched by _native_id only;
 *      one without it (still starting) is skipped until the next scan.
 *
 * Dicts: every layout of 3.8–3.15 (py_objlayout.h): combined and split
 * tables; ≤3.10 entries with hashes and index widths by size; 3.11+
 * dk_log2_* and dk_kind (unicode entries without hash).  Instance
 * attributes: the dict at tp_dictoffset (≤3.10); the managed dict or
 * the values block before the object with the type's shared keys
 * (ht_cached_keys) in 3.11 (two words) and 3.12 (one tagged word); the
 * managed dict or the inline values inside the object in 3.13–3.15.  Keys
 * are compared as str by content (exact str type, compact ASCII).
 *
 * Validation: every object's ob_type is compared with the target's
 * PyDict_Type / PyModule_Type / PyUnicode_Type / PyLong_Type; table
 * sizes, entry counts, index widths and digit counts are bounded; every
 * loop is bounded.  A torn read fails the scan (the previous names are
 * kept) or skips the one Thread it concerns; nothing is ever invented.
 * Free-threaded builds (3.13t-3.15t) are read the same way with their
 * own object header (the 3.13t table).  Unsupported (always NULL):
 * 3.16+ (no object table), a build whose table does not match its
 * _Py_DebugOffsets (3.13, 3.13t) or whose _Py_DebugOffsets contradict
 * the facts 3.14/3.15 take from 3.13 or 3.13t, a target without the
 * type symbols.
 *
 * Cost and refresh policy: one scan reads all names at once into a
 * cache (tid -> name).  A call for a tid in the cache re-scans only when
 * the cache is older than NAMES_TTL_NS (renames show within that); a
 * call for a tid not in it re-scans once the cache is older than
 * NAMES_COST_FACTOR times the CPU time the last scan took.  A thread that just
 * started is then named from the caller's next look (a recorder at
 * 1 kHz: its first or second sample) while scans stay a small share of
 * the caller's time however many threads the target has: with a few
 * threads a scan takes tens of microseconds, with a thousand tens of
 * milliseconds.  A failed scan keeps the old cache and waits the same
 * intervals.  A scan costs about four reads per dict plus one batched
 * read for the keys it has not seen before (keys matched last time are
 * tried first).
 */
#include "lib/py/py_internal.h"

#include "lib/py/py_debugoff.h"
#include "lib/py/py_objlayout.h"
#include "lib/util/alloc.h"
#include "lib/util/grow.h"

#include <errno.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>

#define NAMES_TTL_NS 500000000ull   /* known tid: cache served this long */
#define NAMES_COST_FACTOR 10        /* unknown tid: rescan after 10x the last scan's time */
#define SCAN_TRIES 2                /* scans per refresh (torn reads are transient) */
#define MAX_LOG2 17                 /* largest dict table read: 2^17 slots */
#define MAX_THREADS 4096            /* Thread objects read per scan */
#define MAX_KEYS 65536              /* distinct keys classified per scan */
#define KEY_PEEK 16                 /* str bytes read along with a key's header */
#define HINTS 16
#define NTYPES 32
#define NAME_CAP 256
#define IOV_BATCH 1024

enum { K_NONE = -1, K_THREADING, K_ACTIVE, K_LIMBO, K_NAME, K_NATIVE_ID, K_COUNT };
static const char *const knames[K_COUNT] = { "threading", "_active", "_limbo", "_name", "_native_id" };

typedef struct nkv {
    uint64_t key, value;
} nkv;

typedef struct nentry {
    int64_t tid;
    uint32_t off;          /* name in buf */
} nentry;

typedef struct ntable {
    nentry *e;
    size_t n, cap;
    char *buf;
    size_t used, bufcap;
} ntable;

typedef struct ntype {
    uint64_t addr, flags, cached_keys;
    int64_t basicsize, dictoffset;
    int have_keys;
} ntype;

struct pynames {
    const py_objlayout *O;
    py_objlayout own;      /* 3.14+: built from the debug block; O points here */
    int state;             /* 0 not checked yet, 1 usable, -1 never */
    uint64_t module_doff;  /* PyModule_Type.tp_dictoffset */
    ntable cur;            /* the cache */
    uint64_t scan_ns;
    uint64_t scan_cost_ns; /* the calling thread's CPU time in the last scan */
    int scanned;
    uint64_t hint[HINTS];  /* keys that matched in the last good scan */
    int nhint;
    /* per scan */
    trch_u64map keys;      /* key address -> its class + 1 (0: K_NONE) */
    ntype types[NTYPES];
    int ntypes;
};

typedef struct pynames pynames;

/* ---- small helpers ---------------------------------------------------- */

static int rd(py_proc *p, uint64_t addr, void *buf, size_t len)
{
    if (addr == 0 || addr + len < addr)
        return -1;
    return pymem_read(&p->mem, addr, buf, len);
}

static int rd64(py_proc *p, uint64_t addr, uint64_t *v)
{
    uint8_t b[8];
    if ((addr & 7) || rd(p, addr, b, 8) != 0)
        return -1;
    *v = pysnap_u64(b, 0);
    return 0;
}

static int aligned_ptr(uint64_t a)
{
    return a != 0 && (a & 7) == 0 && a < (1ull << 57);
}

/* ob_type of the object at addr is want. */
static int has_type(py_proc *p, const py_objlayout *O, uint64_t addr, uint64_t want)
{
    uint64_t t;
    return aligned_ptr(addr) && rd64(p, addr + O->ob_type, &t) == 0 && t == want;
}

static void table_free(ntable *t)
{
    trc_free(t->e);
    trc_free(t->buf);
    memset(t, 0, sizeof *t);
}

static int table_add(ntable *t, int64_t tid, const char *name)
{
    size_t len = strlen(name) + 1;
    for (size_t i = 0; i < t->n; i++)
        if (t->e[i].tid == tid)
            return 0;   /* first one wins (_active before _limbo) */
    if (trcu_grow((void **)&t->e, &t->cap, t->n, sizeof *t->e) != TRC_OK ||
        trcu_grow((void **)&t->buf, &t->bufcap, t->used + len - 1, 1) != TRC_OK)
        return -1;
    memcpy(t->buf + t->used, name, len);
    t->e[t->n].tid = tid;
    t->e[t->n].off = (uint32_t)t->used;
    t->n++;
    t->used += len;
    return 0;
}

static const char *table_find(const ntable *t, int64_t tid)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->e[i].tid == tid)
            return t->buf + t->e[i].off;
    return NULL;
}

/* ---- key classification ------------------------------------------------ */

/* Class of a key already classified in this scan: 1 and *cls, or 0. */
static int key_known(const pynames *n, uint64_t addr, int *cls)
{
    uint32_t v;

    if (!trch_u64map_get(&n->keys, addr, &v))
        return 0;
    *cls = (int)v - 1;
    return 1;
}

/* Records addr's class; 0, or -1 when the map is full or out of memory.
 * A key classified twice keeps its first class (a dict lists each key
 * once: twice would mean a torn read, and either answer is a guess). */
static int key_set(pynames *n, uint64_t addr, int cls)
{
    uint32_t v;
    int added;

    if (trch_u64map_count(&n->keys) >= MAX_KEYS && !trch_u64map_get(&n->keys, addr, &v))
        return -1;
    return trch_u64map_put(&n->keys, addr, (uint32_t)(cls + 1), &v, &added) == TRC_OK ? 0 : -1;
}

/* Class of a key whose first len bytes are in b. */
static int key_class(const py_proc *p, const uint8_t *b, size_t len)
{
    const py_layout *L = &p->L;
    if (len < L->u_ascii_data || pysnap_u64(b, L->ob_type) != p->unicode_type)
        return K_NONE;
    uint32_t state = pysnap_u32(b, L->u_state);
    int64_t n = (int64_t)pysnap_u64(b, L->u_length);
    if (!((state >> L->u_compact_bit) & 1) || !((state >> L->u_ascii_bit) & 1) ||
        ((state >> L->u_kind_shift) & 7) != 1 || n <= 0 || n >= KEY_PEEK ||
        L->u_ascii_data + (size_t)n > len)
        return K_NONE;
    for (int k = 0; k < K_COUNT; k++)
        if (strlen(knames[k]) == (size_t)n && memcmp(b + L->u_ascii_data, knames[k], (size_t)n) == 0)
            return k;
    return K_NONE;
}

/* Classifies the keys addr[0..cnt) in batched reads; a key that cannot
 * be read at all is not a match.  0, or -1 on a hard error. */
static int classify(py_proc *p, pynames *n, const uint64_t *addr, size_t cnt)
{
    size_t each = p->L.u_ascii_data + KEY_PEEK;
    size_t batch = cnt < IOV_BATCH ? cnt : IOV_BATCH;
    uint8_t *buf = trc_malloc(batch * each);
    struct iovec *lv = trc_malloc(2 * batch * sizeof *lv);
    int rc = -1;

    if (!buf || !lv)
        goto out;
    struct iovec *rv = lv + batch;
    for (size_t base = 0; base < cnt; base += IOV_BATCH) {
        int m = (int)(cnt - base < batch ? cnt - base : batch);
        for (int i = 0; i < m; i++) {
            lv[i].iov_base = buf + (size_t)i * each;
            lv[i].iov_len = each;
            rv[i].iov_base = (void *)(uintptr_t)addr[base + (size_t)i];
            rv[i].iov_len = each;
        }
        int at = 0;
        while (at < m) {
            int k = pymem_readv(&p->mem, lv + at, rv + at, m - at);
            if (k < 0)
                goto out;
            for (int i = at; i < at + k; i++)
                if (key_set(n, addr[base + (size_t)i], key_class(p, lv[i].iov_base, each)) != 0)
                    goto out;
            at += k;
            if (at < m) {
                /* it may end close to an unmapped page: its header alone */
                uint64_t a = addr[base + (size_t)at];
                int cls = K_NONE;
                if (rd(p, a, lv[at].iov_base, p->L.u_ascii_data) == 0)
                    cls = key_class(p, lv[at].iov_base, p->L.u_ascii_data);
                if (key_set(n, a, cls) != 0)
                    goto out;
                at++;
            }
        }
    }
    rc = 0;
out:
    trc_free(buf);
    trc_free(lv);
    return rc;
}

/* vals[k] = the value of the key of class want[k] in kv[0..cnt), or 0,
 * from the classes known so far.  Returns how many are still missing. */
static int resolve(pynames *n, const nkv *kv, size_t cnt, const int *want, int nwant,
                   uint64_t *vals)
{
    int missing = 0;

    for (int k = 0; k < nwant; k++)
        vals[k] = 0;
    for (size_t i = 0; i < cnt; i++) {
        int cls;
        if (!key_known(n, kv[i].key, &cls))
            continue;
        for (int k = 0; k < nwant; k++)
            if (cls == want[k])
                vals[k] = kv[i].value;
    }
    for (int k = 0; k < nwant; k++)
        missing += vals[k] == 0;
    return missing;
}

static int hinted(const pynames *n, uint64_t key)
{
    for (int h = 0; h < n->nhint; h++)
        if (n->hint[h] == key)
            return 1;
    return 0;
}

/* Like resolve(), classifying what is needed: first the keys that
 * matched in the last scan (interned names are shared by every Thread
 * and survive between scans, but are verified again), then, only while
 * something is still missing, every key not classified yet.  0, or -1
 * on a hard error. */
static int find_keys(py_proc *p, pynames *n, const nkv *kv, size_t cnt, const int *want,
                     int nwant, uint64_t *vals)
{
    uint64_t *todo = NULL;
    int rc = -1;

    for (int round = 0; round < 2; round++) {
        if (resolve(n, kv, cnt, want, nwant, vals) == 0)
            break;
        size_t m = 0;
        for (size_t i = 0; i < cnt; i++) {
            int cls;
            if (key_known(n, kv[i].key, &cls))
                continue;
            if (round == 0 && !hinted(n, kv[i].key))
                continue;
            if (!todo && !(todo = trc_malloc(cnt * sizeof *todo)))
                goto out;
            todo[m++] = kv[i].key;
        }
        if (m && classify(p, n, todo, m) != 0)
            goto out;
    }
    resolve(n, kv, cnt, want, nwant, vals);
    rc = 0;
out:
    trc_free(todo);
    return rc;
}

/* ---- dicts -------------------------------------------------------------- */

/* Pairs of the keys object at keys (its live entries).  values: the
 * PyObject *[] of a split table (0: the values are in the entries);
 * vcap: how many of them may be read.  *out is trc_malloc'd.  Returns
 * the count, or -1 (inconsistent read, or a hard error in p->last). */
static int keys_items(py_proc *p, const py_objlayout *O, uint64_t keys, uint64_t values,
                      int64_t vcap, nkv **out)
{
    uint8_t h[64];
    uint8_t *ent = NULL, *val = NULL;
    int rc = -1;
    int64_t size, nentries;
    uint64_t entries;
    uint32_t esize, ekey, evalue;

    *out = NULL;
    if (!aligned_ptr(keys) || O->dk_indices > sizeof h || rd(p, keys, h, O->dk_indices) != 0)
        return -1;
    nentries = (int64_t)pysnap_u64(h, O->dk_nentries);
    if (O->dk_size != PY_OFF_NONE) {
        size = (int64_t)pysnap_u64(h, O->dk_size);
        if (size < 8 || size > (1 << MAX_LOG2) || (size & (size - 1)))
            return -1;
        int width = size <= 0xff ? 1 : size <= 0xffff ? 2 : 4;
        entries = keys + O->dk_indices + (uint64_t)(size * width);
        esize = O->de_size;
        ekey = O->de_key;
        evalue = O->de_value;
    } else {
        unsigned lg = h[O->dk_log2_size], lgi = h[O->dk_log2_index_bytes], kind = h[O->dk_kind];
        if (lg < 3 || lg > MAX_LOG2 || kind > 2)
            return -1;
        unsigned wlog = lg < 8 ? 0 : lg < 16 ? 1 : 2;
        if (lgi != lg + wlog)
            return -1;
        size = (int64_t)1 << lg;
        entries = keys + O->dk_indices + ((uint64_t)1 << lgi);
        int general = kind == O->dk_kind_general;
        esize = general ? O->de_size : O->due_size;
        ekey = general ? O->de_key : O->due_key;
        evalue = general ? O->de_value : O->due_value;
        if (values && general)
            return -1;   /* split tables have str keys */
    }
    if (nentries < 0 || nentries > (size * 2) / 3 + 1)
        return -1;
    if (values && nentries > vcap)
        nentries = vcap;
    if (nentries == 0)
        return 0;
    ent = trc_malloc((size_t)nentries * esize);
    nkv *kv = trc_malloc((size_t)nentries * sizeof *kv);
    *out = kv;
    if (!ent || !kv) {
        p->last = PY_ERR_NOMEM;
        goto out;
    }
    if (rd(p, entries, ent, (size_t)nentries * esize) != 0)
        goto out;
    if (values) {
        if (!(val = trc_malloc((size_t)nentries * 8))) {
            p->last = PY_ERR_NOMEM;
            goto out;
        }
        if ((values & 7) || rd(p, values, val, (size_t)nentries * 8) != 0)
            goto out;
    }
    int m = 0;
    for (int64_t i = 0; i < nentries; i++) {
        uint64_t k = pysnap_u64(ent, (uint32_t)(i * esize + ekey));
        uint64_t v = values ? pysnap_u64(val, (uint32_t)(i * 8)) : pysnap_u64(ent, (uint32_t)(i * esize + evalue));
        if (!k || !v)
            continue;   /* deleted, or not set in this split table */
        if (!aligned_ptr(k) || !aligned_ptr(v))
            goto out;
        kv[m].key = k;
        kv[m].value = v;
        m++;
    }
    rc = m;
out:
    trc_free(ent);
    trc_free(val);
    if (rc < 0) {
        trc_free(*out);
        *out = NULL;
    }
    return rc;
}

/* Live pairs of the dict at addr (checked to be a dict). */
static int dict_items(py_proc *p, const py_objlayout *O, uint64_t addr, nkv **out)
{
    uint8_t d[64];
    uint32_t len = O->di_values + 8;

    *out = NULL;
    if (!aligned_ptr(addr) || len > sizeof d || rd(p, addr, d, len) != 0 ||
        pysnap_u64(d, O->ob_type) != p->dict_type)
        return -1;
    int64_t used = (int64_t)pysnap_u64(d, O->di_used);
    uint64_t keys = pysnap_u64(d, O->di_keys), values = pysnap_u64(d, O->di_values);
    if (used < 0 || used > ((int64_t)2 << MAX_LOG2) / 3)
        return -1;
    if (used == 0)
        return 0;
    int n = keys_items(p, O, keys, values ? values + O->dv_values : 0, (int64_t)1 << MAX_LOG2, out);
    if (n > used) {   /* more live entries than the dict holds: torn */
        trc_free(*out);
        *out = NULL;
        return -1;
    }
    return n;
}

/* The values of the keys of classes want[0..nwant) in the dict at addr. */
static int dict_find(py_proc *p, pynames *n, uint64_t addr, const int *want, int nwant,
                     uint64_t *vals)
{
    nkv *kv;
    int cnt = dict_items(p, n->O, addr, &kv);
    if (cnt < 0)
        return -1;
    int rc = find_keys(p, n, kv, (size_t)cnt, want, nwant, vals);
    trc_free(kv);
    return rc;
}

/* ---- Thread objects ---------------------------------------------------- */

static ntype *type_info(py_proc *p, pynames *n, uint64_t addr)
{
    const py_objlayout *O = n->O;
    uint8_t b[512];

    for (int i = 0; i < n->ntypes; i++)
        if (n->types[i].addr == addr)
            return &n->types[i];
    uint32_t len = O->tp_dictoffset;
    if (O->tp_flags > len)
        len = O->tp_flags;
    if (O->tp_basicsize > len)
        len = O->tp_basicsize;
    len += 8;
    if (!aligned_ptr(addr) || len > sizeof b || rd(p, addr, b, len) != 0)
        return NULL;
    ntype t = { 0 };
    t.addr = addr;
    t.flags = pysnap_u64(b, O->tp_flags);
    t.basicsize = (int64_t)pysnap_u64(b, O->tp_basicsize);
    t.dictoffset = (int64_t)pysnap_u64(b, O->tp_dictoffset);
    if (t.basicsize < 16 || t.basicsize > 65536 || t.dictoffset < -65536 || t.dictoffset > 65536)
        return NULL;
    if (n->ntypes == NTYPES)
        n->ntypes = 0;   /* Thread classes are few: starting over is fine */
    n->types[n->ntypes] = t;
    return &n->types[n->ntypes++];
}

/* The type's shared keys (values without a dict need them). */
static uint64_t cached_keys(py_proc *p, pynames *n, ntype *t)
{
    if (!t->have_keys) {
        if (!(t->flags & n->O->f_heaptype) || rd64(p, t->addr + n->O->ht_cached_keys, &t->cached_keys) != 0)
            t->cached_keys = 0;
        t->have_keys = 1;
    }
    return t->cached_keys;
}

/* Instance attributes of obj: its (key, value) pairs into *kv. */
static int attr_items(py_proc *p, pynames *n, uint64_t obj, nkv **kv)
{
    const py_objlayout *O = n->O;
    uint64_t tp, dict = 0, values = 0;
    int64_t vcap = (int64_t)1 << MAX_LOG2;

    *kv = NULL;
    if (rd64(p, obj + O->ob_type, &tp) != 0)
        return -1;
    ntype *t = type_info(p, n, tp);
    if (!t)
        return -1;
    if (O->f_managed_dict && (t->flags & O->f_managed_dict)) {
        uint64_t w;
        if (rd64(p, obj + (uint64_t)(int64_t)O->managed_dict, &w) != 0)
            return -1;
        if (O->dorv_tagged && (w & 1))
            values = w + 1;          /* 3.12: values - 1 */
        else
            dict = w;
        if (!dict && O->managed_values && rd64(p, obj + (uint64_t)(int64_t)O->managed_values, &values) != 0)
            return -1;               /* 3.11 */
        if (!dict && !values && O->f_inline_values && (t->flags & O->f_inline_values)) {
            uint8_t hv[8];           /* 3.13: capacity, size, embedded, valid */
            values = obj + O->inline_values;
            if (rd(p, values, hv, sizeof hv) != 0 || !hv[O->dv_valid])
                return -1;
            vcap = hv[0];
        }
        if (!dict && !values)
            return 0;
    } else if (t->dictoffset > 0) {
        if (rd64(p, obj + (uint64_t)t->dictoffset, &dict) != 0)
            return -1;
        if (!dict)
            return 0;
    } else {
        return 0;   /* no instance attributes we can reach */
    }
    if (dict)
        return dict_items(p, O, dict, kv);
    uint64_t keys = cached_keys(p, n, t);
    if (!keys)
        return -1;
    return keys_items(p, O, keys, values + O->dv_values, vcap, kv);
}

/* A positive int that fits in int64 (ids), else -1. */
static int64_t read_long(py_proc *p, const py_objlayout *O, uint64_t addr)
{
    uint8_t b[64];
    uint32_t len = O->lo_digits + 3 * O->lo_digit_size;

    if (!aligned_ptr(addr) || len > sizeof b || O->lo_digit_size != 4 ||
        rd(p, addr, b, O->lo_digits + O->lo_digit_size) != 0 ||
        pysnap_u64(b, O->ob_type) != p->long_type)
        return -1;
    int64_t ndig;
    if (O->lo_tag != PY_OFF_NONE) {
        uint64_t tag = pysnap_u64(b, O->lo_tag);
        if ((tag & 3) != 0)
            return -1;   /* zero or negative */
        ndig = (int64_t)(tag >> 3);
    } else {
        ndig = (int64_t)pysnap_u64(b, O->ob_size);
    }
    if (ndig < 1 || ndig > 3)
        return -1;
    if (ndig > 1 && rd(p, addr + O->lo_digits, b + O->lo_digits, (size_t)ndig * 4) != 0)
        return -1;
    uint64_t v = 0;
    for (int64_t i = ndig - 1; i >= 0; i--) {
        uint32_t d = pysnap_u32(b, O->lo_digits + (uint32_t)i * 4);
        if (d >> O->lo_shift)
            return -1;
        if (v >> (63 - O->lo_shift))
            return -1;
        v = (v << O->lo_shift) | d;
    }
    return v > 0 && v <= INT64_MAX ? (int64_t)v : -1;
}

/* Adds obj's (_native_id, _name) to t when it has both.  0, or -1 only
 * for out of memory / hard errors (a torn Thread is skipped). */
static int add_thread(py_proc *p, pynames *n, uint64_t obj, ntable *t)
{
    static const int want[2] = { K_NAME, K_NATIVE_ID };
    uint64_t vals[2];
    nkv *kv;
    char name[NAME_CAP];

    p->last = PY_OK;
    int cnt = attr_items(p, n, obj, &kv);
    if (cnt < 0)
        return p->last == PY_ERR_NOMEM ? -1 : 0;
    int rc = find_keys(p, n, kv, (size_t)cnt, want, 2, vals);
    trc_free(kv);
    if (rc != 0)
        return -1;
    if (!vals[0] || !vals[1])
        return 0;
    int64_t tid = read_long(p, n->O, vals[1]);
    if (tid <= 0 || tid >= (1ll << 32) || pystr_read(p, vals[0], name, sizeof name) != 0)
        return 0;
    return table_add(t, tid, name);
}

/* ---- scan --------------------------------------------------------------- */

/* Names of the threads of one interpreter into t.  0 (also when its
 * threading module is not imported), or -1. */
static int scan_interp(py_proc *p, pynames *n, uint64_t interp, ntable *t)
{
    const py_objlayout *O = n->O;
    static const int w_mod[1] = { K_THREADING };
    static const int w_act[2] = { K_ACTIVE, K_LIMBO };
    uint64_t modules, mod[1], md_dict, act[2];

    if (rd64(p, interp + O->is_modules, &modules) != 0)
        return -1;
    if (!modules)
        return 0;   /* starting or finishing */
    if (dict_find(p, n, modules, w_mod, 1, mod) != 0)
        return -1;
    if (!mod[0])
        return 0;   /* threading not imported */
    if (!has_type(p, O, mod[0], p->module_type) || rd64(p, mod[0] + n->module_doff, &md_dict) != 0)
        return -1;
    if (dict_find(p, n, md_dict, w_act, 2, act) != 0)
        return -1;
    for (int d = 0; d < 2; d++) {
        nkv *kv;
        if (!act[d])
            continue;
        int cnt = dict_items(p, O, act[d], &kv);
        if (cnt < 0)
            return -1;
        for (int i = 0; i < cnt && i < MAX_THREADS; i++)
            if (add_thread(p, n, kv[i].value, t) != 0) {
                trc_free(kv);
                return -1;
            }
        trc_free(kv);
    }
    return 0;
}

static void remember_hints(pynames *n)
{
    n->nhint = 0;
    for (uint32_t i = 0; i < trch_u64map_count(&n->keys) && n->nhint < HINTS; i++)
        if (n->keys.vals[i] != 0)   /* a class other than K_NONE */
            n->hint[n->nhint++] = n->keys.keys[i];
}

static int scan(py_proc *p, pynames *n)
{
    ntable t = { 0 };
    uint64_t interp;
    int rc = -1;

    n->ntypes = 0;
    trch_u64map_clear(&n->keys);
    if (rd64(p, p->runtime + p->L.rt_interp_head, &interp) != 0)
        goto out;
    for (int i = 0; interp; i++) {
        uint64_t next;
        if (i >= PY_INTERPS_MAX || !aligned_ptr(interp) || rd64(p, interp + p->L.is_next, &next) != 0)
            goto out;
        if (scan_interp(p, n, interp, &t) != 0)
            goto out;
        interp = next;
    }
    table_free(&n->cur);
    n->cur = t;
    memset(&t, 0, sizeof t);
    remember_hints(n);
    rc = 0;
out:
    table_free(&t);
    return rc;
}

/* The calling thread's CPU time: what a scan costs, without the time a
 * busy machine kept the caller waiting (which would hold off the next
 * scan for nothing). */
static uint64_t cpu_now_ns(void)
{
    struct timespec ts;

    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Checks once that this target's names can be read.  1 usable, 0 not
 * now (a read failed), -1 never. */
static int check(py_proc *p, pynames *n)
{
    const py_objlayout *O = p->L.minor == 13 && p->L.free_threaded ? py_objlayout_313t()
                                                                    : py_objlayout_for_minor(p->L.minor);

    if (!p->dict_type || !p->module_type || !p->long_type || !p->unicode_type)
        return -1;
    if (p->L.minor >= 14) {
        /* 3.13's table with what the build publishes of itself */
        uint8_t blk[PY_DEBUG_READ];
        if (rd(p, p->runtime, blk, sizeof blk) != 0)
            return 0;
        if (py_objlayout_from_debug(blk, sizeof blk, &n->own) != 0)
            return -1;
        O = &n->own;
    }
    if (!O || O->ob_type != p->L.ob_type)
        return -1;
    if (p->L.minor == 13) {
        /* the table must agree with what the build says of itself */
        uint8_t blk[PY_DEBUG_READ];
        uint64_t ft, mods, keys, vals;
        if (rd(p, p->runtime, blk, sizeof blk) != 0)
            return 0;
        if (py_debugoff_field(blk, sizeof blk, "free_threaded", &ft) != 0 ||
            ft != p->L.free_threaded ||
            py_debugoff_field(blk, sizeof blk, "is.imports_modules", &mods) != 0 ||
            mods != O->is_modules ||
            py_debugoff_field(blk, sizeof blk, "di.ma_keys", &keys) != 0 || keys != O->di_keys ||
            py_debugoff_field(blk, sizeof blk, "di.ma_values", &vals) != 0 || vals != O->di_values)
            return -1;
    }
    uint64_t doff;
    if (rd64(p, p->module_type + O->tp_dictoffset, &doff) != 0)
        return 0;
    if (doff < 16 || doff > 256 || (doff & 7))
        return -1;
    n->O = O;
    n->module_doff = doff;
    return 1;
}

void pynames_free(py_proc *p)
{
    if (!p->names)
        return;
    table_free(&p->names->cur);
    trch_u64map_cleanup(&p->names->keys);
    trc_free(p->names);
    p->names = NULL;
}

const char *py_proc_thread_name(py_proc *p, int64_t tid)
{
    const char *found = NULL;

    if (!p || tid <= 0)
        return NULL;
    pthread_mutex_lock(&p->lock);
    py_status saved = p->last;   /* this call is not a sample: keep its error */
    if (!p->names && !(p->names = trc_calloc(1, sizeof *p->names)))
        goto out;
    pynames *n = p->names;
    if (n->state == 0)
        n->state = check(p, n);
    if (n->state != 1)
        goto out;
    uint64_t now = pymem_now_ns();
    found = table_find(&n->cur, tid);
    uint64_t miss_ns = NAMES_COST_FACTOR * n->scan_cost_ns;
    if (!n->scanned || now - n->scan_ns >= (found ? NAMES_TTL_NS : miss_ns)) {
        uint64_t cpu = cpu_now_ns();
        for (int i = 0; i < SCAN_TRIES; i++)
            if (scan(p, n) == 0)
                break;
        n->scanned = 1;
        n->scan_ns = now;
        n->scan_cost_ns = cpu_now_ns() - cpu;
        found = table_find(&n->cur, tid);
    }
    if (found) {
        size_t len = strnlen(found, sizeof p->name - 1);
        memcpy(p->name, found, len);
        p->name[len] = '\0';
        found = p->name;
    }
out:
    p->last = saved;
    pthread_mutex_unlock(&p->lock);
    return found;
}
