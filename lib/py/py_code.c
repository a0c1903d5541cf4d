/*
 * py_code.c — code objects to py_frame_info (docs/design/cpython.md §5
 * code objects, §6 line tables, §7 strings).
 *
 * The cache is keyed by the code object's full 64-bit address.  A hit is
 * only trusted when the fields compared on every use (type, filename,
 * name, line table and, 3.11+, size pointers/values, first line) are the
 * same as when it was decoded: an address reused by another code object
 * is decoded afresh.  Names and line table are read and decoded once per
 * code object; frame infos are created once per (code object, line) and
 * live in the arena until py_proc_free, so the pointers handed out stay
 * valid even when the cache entry is replaced.
 *
 * Reuse.  Pointers alone are not enough: a program that compiles code in
 * a loop (exec, templates) frees a code object together with its name,
 * file name and line table, and the allocator's free lists hand the same
 * addresses to the next one, so every pointer compared can be equal while
 * the name is another (seen with Debian's 3.11: period-2 reuse of all
 * four addresses).  From 3.12 every code object carries co_version, a
 * value no other code object created before it has (a global counter):
 * a hit compares it, at no cost.  Without it (3.8–3.11, or a counter run
 * out to 0) a hit also checks what the name and file strings hold: the
 * length, kind and characters of each are hashed at decode and hashed
 * again from this sample's copy (one range per string, planned in the
 * sample's batched read along with the code object: pycode_plan; about
 * 0.4 us per distinct name per sample).  What then remains trusted
 * without a look is the line table's content: a code object with the
 * same name, file and first line at the same addresses is taken for the
 * same function (its lines could differ only if its source did).
 */
#include "lib/py/py_internal.h"
#include "lib/py/py_text.h"

#include "lib/util/alloc.h"
#include "lib/util/grow.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MAX_STR_CHARS 4096
#define MAX_CODES 262144   /* entries before the cache starts over */

/* Interned copy of s in the arena; NULL on ENOMEM.  The copies live
 * until py_proc_free, so a frame info may keep pointing at them after
 * its cache entry is gone. */
static const char *intern(py_proc *p, const char *s)
{
    trci_map *m = &p->cc.str;
    size_t n = strlen(s);
    uint64_t h = trci_hash(s, n);
    uint32_t i;
    const void *copy;

    if (trci_find(m, s, n, h, &i))
        return m->ents[i].key;
    if (trci_insert(m, &p->arena, s, n, h, m->n, &copy) != TRC_OK)
        return NULL;
    return copy;
}

int pystr_read(py_proc *p, uint64_t addr, char *buf, size_t cap)
{
    const py_layout *L = &p->L;
    uint8_t hdr[128];
    uint8_t *data = NULL;
    int rc = -1;

    if (cap == 0 || addr == 0 || (addr & 7) || L->u_compact_data > sizeof hdr)
        return -1;
    buf[0] = '\0';
    if (pymem_read(&p->mem, addr, hdr, L->u_ascii_data) != 0)
        return -1;
    if (pysnap_u64(hdr, L->ob_type) != p->unicode_type)
        return -1;
    int64_t len = (int64_t)pysnap_u64(hdr, L->u_length);
    uint32_t state = pysnap_u32(hdr, L->u_state);
    unsigned kind = (state >> L->u_kind_shift) & 7;
    int compact = (state >> L->u_compact_bit) & 1, ascii = (state >> L->u_ascii_bit) & 1;
    if (L->u_ready_bit != PY_OFF_NONE && !((state >> L->u_ready_bit) & 1))
        return -1;
    if (len < 0 || (kind != 1 && kind != 2 && kind != 4) || (ascii && kind != 1))
        return -1;
    if (len > MAX_STR_CHARS)
        len = MAX_STR_CHARS;
    uint64_t daddr;
    if (compact && ascii) {
        daddr = addr + L->u_ascii_data;
    } else if (compact) {
        daddr = addr + L->u_compact_data;
    } else {
        uint8_t ptr[8];
        if (pymem_read(&p->mem, addr + L->u_legacy_data, ptr, 8) != 0)
            return -1;
        daddr = pysnap_u64(ptr, 0);
    }
    size_t nbytes = (size_t)len * kind;
    data = trc_malloc(nbytes + 1);
    if (!data)
        return -1;
    if (nbytes && pymem_read(&p->mem, daddr, data, nbytes) != 0)
        goto out;
    size_t o = 0;
    for (int64_t i = 0; i < len; i++) {
        uint32_t cp = py_ucs_at(data, kind, i);
        /* No name or path holds NUL, and an ASCII-flagged string holds
         * nothing above 0x7f: either means the object was freed and its
         * memory reused while we read it (a process exiting), so the read
         * fails and the sample counts as invalid instead of inventing a
         * name. */
        if (cp == 0 || (ascii && cp > 0x7f))
            goto out;
        size_t w = py_utf8_put(buf + o, cap - 1 - o, cp);
        if (w == 0)
            break;
        o += w;
    }
    buf[o] = '\0';
    rc = 0;
out:
    trc_free(data);
    return rc;
}

/* Reads a bytes object's contents; *out is trc_malloc'd. */
static int read_bytes(py_proc *p, uint64_t addr, uint8_t **out, size_t *n)
{
    const py_layout *L = &p->L;
    uint8_t hdr[64];

    *out = NULL;
    *n = 0;
    if (addr == 0 || L->by_sval > sizeof hdr || pymem_read(&p->mem, addr, hdr, L->by_sval) != 0)
        return -1;
    if (pysnap_u64(hdr, L->ob_type) != p->bytes_type)
        return -1;
    int64_t size = (int64_t)pysnap_u64(hdr, L->ob_size);
    if (size < 0 || size > (int64_t)PY_LINES_MAX_TABLE)
        return -1;
    uint8_t *d = trc_malloc((size_t)size + 1);
    if (!d)
        return -1;
    if (size > 0 && pymem_read(&p->mem, addr + L->by_sval, d, (size_t)size) != 0) {
        trc_free(d);
        return -1;
    }
    *out = d;
    *n = (size_t)size;
    return 0;
}

int64_t pycode_units(const py_proc *p, const uint8_t *hdr)
{
    return p->L.lasti_kind == PY_LASTI_POINTER ? (int64_t)pysnap_u64(hdr, p->L.ob_size) : 0;
}

static void code_free(pycode *c)
{
    if (!c)
        return;
    trc_free(c->map);
    trc_free(c->lines);
    trc_free(c);
}

void pycode_cache_free(pycode_cache *c)
{
    for (size_t i = 0; i < c->count; i++)
        code_free(c->code[i]);
    trc_free(c->code);
    trch_index_cleanup(&c->index);
    trci_free(&c->str);
    memset(c, 0, sizeof *c);
}

/* Index in c->code of the entry for addr, or TRCH_NONE.  Inline, like
 * fields_match: both run for every frame a sample resolves, and without
 * the hint GCC calls them (0.7% more instructions per walk). */
static inline uint32_t code_find(const pycode_cache *c, uint64_t addr)
{
    trch_probe pr;

    for (uint32_t i = trch_first(&c->index, trch_hash_u64(addr), &pr); i != TRCH_NONE;
         i = trch_next(&c->index, &pr))
        if (c->code[i]->addr == addr)
            return i;
    return TRCH_NONE;
}

/* Room for one more entry, so that adding it after a decode cannot
 * fail.  0, or -1 when out of memory. */
static int code_room(pycode_cache *c)
{
    if (trcu_grow((void **)&c->code, &c->cap, c->count, sizeof *c->code) != TRC_OK)
        return -1;
    return trch_reserve(&c->index, (uint32_t)c->count + 1) == TRC_OK ? 0 : -1;
}

/* Fingerprint of a str object from a copy of its first `have` bytes.
 * Returns 0 with *span (bytes from the object's start up to its last
 * character) and *fp set; 1 when have < *span (read *span bytes and call
 * again); -1 when it is not a compact str (legacy strings keep their
 * characters elsewhere: not fingerprinted) or looks wrong. */
static int str_fp(const py_proc *p, const uint8_t *obj, size_t have, uint32_t *span, uint64_t *fp)
{
    const py_layout *L = &p->L;

    if (have < L->u_ascii_data || pysnap_u64(obj, L->ob_type) != p->unicode_type)
        return -1;
    int64_t len = (int64_t)pysnap_u64(obj, L->u_length);
    uint32_t state = pysnap_u32(obj, L->u_state);
    unsigned kind = (state >> L->u_kind_shift) & 7;
    int compact = (state >> L->u_compact_bit) & 1, ascii = (state >> L->u_ascii_bit) & 1;
    if (!compact || len < 0 || len > MAX_STR_CHARS || (kind != 1 && kind != 2 && kind != 4))
        return -1;
    uint32_t data = ascii ? L->u_ascii_data : L->u_compact_data;
    *span = data + (uint32_t)len * kind;
    if (have < *span)
        return 1;
    *fp = trch_hash_more(trch_hash_u64((uint64_t)len << 3 | kind), obj + data, *span - data);
    return 0;
}

/* Sets c->s_span[i] / s_fp[i] for the string at addr (0 span when it
 * cannot be fingerprinted: pointers are then all that is compared). */
static void fp_init(py_proc *p, pycode *c, int i, uint64_t addr)
{
    uint8_t small[64];
    uint32_t span = 0;
    uint64_t fp = 0;

    c->s_span[i] = 0;
    if (!addr || p->L.u_ascii_data > sizeof small ||
        pymem_read(&p->mem, addr, small, p->L.u_ascii_data) != 0)
        return;
    int r = str_fp(p, small, p->L.u_ascii_data, &span, &fp);
    if (r == 1) {
        uint8_t *big = trc_malloc(span);
        if (!big)
            return;
        if (pymem_read(&p->mem, addr, big, span) == 0)
            r = str_fp(p, big, span, &span, &fp);
        trc_free(big);
    }
    if (r == 0) {
        c->s_span[i] = span;
        c->s_fp[i] = fp;
    }
}

/* Do the name and file strings still hold what they held at decode?
 * Read from the sample's copy, or on demand.  Cannot fail (0 = no). */
static int strings_same(py_proc *p, const pycode *c)
{
    const uint64_t addr[2] = { c->v_name, c->v_file };

    for (int i = 0; i < 2; i++) {
        uint32_t span = c->s_span[i];
        if (!span)
            continue;
        const uint8_t *b = pysnap_get(&p->snap, addr[i], span);
        if (!b && !(b = pysnap_need_exact(&p->snap, addr[i], span)))
            return 0;
        uint32_t got;
        uint64_t fp;
        if (str_fp(p, b, span, &got, &fp) != 0 || got != span || fp != c->s_fp[i])
            return 0;
    }
    return 1;
}

void pycode_plan(py_proc *p, uint64_t addr)
{
    const pycode_cache *cc = &p->cc;
    uint32_t i = code_find(cc, addr);

    if (i == TRCH_NONE)
        return;
    const pycode *c = cc->code[i];
    if (c->s_span[0])
        pysnap_plan_at(&p->snap, c->v_name, c->s_span[0], PYSNAP_FIRST);
    if (c->s_span[1] && c->v_file != c->v_name)
        pysnap_plan_at(&p->snap, c->v_file, c->s_span[1], PYSNAP_FIRST);
}

static void fill_validation(const py_proc *p, pycode *c, const uint8_t *hdr)
{
    const py_layout *L = &p->L;

    c->v_type = pysnap_u64(hdr, L->ob_type);
    c->v_file = pysnap_u64(hdr, L->co_filename);
    c->v_name = pysnap_u64(hdr, L->use_qualname ? L->co_qualname : L->co_name);
    c->v_lines = pysnap_u64(hdr, L->co_lines);
    c->v_size = pycode_units(p, hdr);
    c->v_first = (int32_t)pysnap_u32(hdr, L->co_firstlineno);
    c->v_version = L->co_version != PY_OFF_NONE ? pysnap_u32(hdr, L->co_version) : 0;
}

/* The pointer and value check of a hit (no read). */
static inline int fields_match(const py_proc *p, const pycode *c, const uint8_t *hdr)
{
    const py_layout *L = &p->L;

    return pysnap_u64(hdr, L->ob_type) == c->v_type &&
           pysnap_u64(hdr, L->co_filename) == c->v_file &&
           pysnap_u64(hdr, L->use_qualname ? L->co_qualname : L->co_name) == c->v_name &&
           pysnap_u64(hdr, L->co_lines) == c->v_lines && pycode_units(p, hdr) == c->v_size &&
           (int32_t)pysnap_u32(hdr, L->co_firstlineno) == c->v_first &&
           (L->co_version == PY_OFF_NONE || pysnap_u32(hdr, L->co_version) == c->v_version);
}

/* The whole check of a hit; hdr may be invalid afterwards (strings_same
 * may read). */
static int matches(py_proc *p, const pycode *c, const uint8_t *hdr)
{
    return fields_match(p, c, hdr) && strings_same(p, c);
}

const struct pycode *pycode_last(const py_proc *p)
{
    return p->cc.last;
}

int pycode_still(py_proc *p, const struct pycode *c, const uint8_t *hdr)
{
    /* the type first, as pycode_resolve checks it before the cache */
    return pysnap_u64(hdr, p->L.ob_type) == p->code_type && matches(p, c, hdr);
}

/* Decodes the code object at addr (header hdr).  NULL on failure. */
static pycode *code_decode(py_proc *p, uint64_t addr, const uint8_t *hdr)
{
    pycode *c = trc_calloc(1, sizeof *c);
    char *s = trc_malloc(MAX_STR_CHARS * 4 + 1);
    uint8_t *tab = NULL;
    size_t ntab = 0;

    if (!c || !s) {
        p->last = PY_ERR_NOMEM;
        goto fail;
    }
    c->addr = addr;
    fill_validation(p, c, hdr);
    if (!c->v_version) {   /* else co_version tells code objects apart */
        fp_init(p, c, 0, c->v_name);
        fp_init(p, c, 1, c->v_file);
    }
    p->last = PY_ERR_IO;
    if (pystr_read(p, c->v_file, s, MAX_STR_CHARS * 4 + 1) != 0 || !(c->file = intern(p, s)))
        goto fail;
    if (pystr_read(p, c->v_name, s, MAX_STR_CHARS * 4 + 1) != 0 || !(c->function = intern(p, s)))
        goto fail;
    if (read_bytes(p, c->v_lines, &tab, &ntab) != 0 ||
        py_lines_decode((int)p->L.lines_kind, tab, ntab, c->v_first, &c->map, &c->nmap) != 0)
        goto fail;
    trc_free(tab);
    trc_free(s);
    return c;
fail:
    trc_free(tab);
    trc_free(s);
    code_free(c);
    return NULL;
}

static const py_frame_info *line_info(py_proc *p, pycode *c, uint32_t line)
{
    uint32_t lo = 0, hi = c->nlines;

    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (c->lines[mid].line < line)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < c->nlines && c->lines[lo].line == line)
        return c->lines[lo].fi;
    if (trcu_grow((void **)&c->lines, &c->caplines, c->nlines, sizeof *c->lines) != TRC_OK)
        return NULL;
    py_frame_info *fi = trca_alloc(&p->arena, sizeof *fi);
    if (!fi)
        return NULL;
    fi->function = c->function;
    fi->file = c->file;
    fi->line = line;
    fi->first_line = c->v_first > 0 ? (uint32_t)c->v_first : 0;
    fi->user_id = 0;
    memmove(c->lines + lo + 1, c->lines + lo, (c->nlines - lo) * sizeof *c->lines);
    c->lines[lo] = (pyline_info){ line, fi };
    c->nlines++;
    return fi;
}

const py_frame_info *pycode_resolve(py_proc *p, uint64_t addr, const uint8_t *hdr_in, int64_t addrq)
{
    /* a copy: the string check may read on demand, moving the snapshot */
    uint8_t hdr[1024];
    if (p->co_len > sizeof hdr || pysnap_u64(hdr_in, p->L.ob_type) != p->code_type) {
        p->last = PY_ERR_IO;
        return NULL;
    }
    memcpy(hdr, hdr_in, p->co_len);
    if (p->cc.count >= MAX_CODES) {
        /* Start the index over; interned strings and frame infos stay. */
        for (size_t i = 0; i < p->cc.count; i++)
            code_free(p->cc.code[i]);
        trch_clear(&p->cc.index);
        p->cc.count = 0;
        p->cc.gen++;
    }
    uint32_t i = code_find(&p->cc, addr);
    pycode *c = i != TRCH_NONE ? p->cc.code[i] : NULL;
    if (c && matches(p, c, hdr)) {
        p->stats.code_cache_hits++;
    } else {
        p->stats.code_cache_misses++;
        if (!c && code_room(&p->cc) != 0) {
            p->last = PY_ERR_NOMEM;
            return NULL;
        }
        pycode *n = code_decode(p, addr, hdr);
        if (!n)
            return NULL;
        if (c) {
            code_free(c);
            p->cc.code[i] = n;
            p->cc.gen++;
        } else {
            (void)trch_add(&p->cc.index, trch_hash_u64(addr), (uint32_t)p->cc.count); /* room made */
            p->cc.code[p->cc.count++] = n;
        }
        c = n;
    }
    p->cc.last = c;
    if (c->last_fi && c->last_addrq == addrq)
        return c->last_fi;
    uint32_t line = addrq == INT64_MIN ? 0 : py_lines_lookup(c->map, c->nmap, addrq, c->v_first);
    const py_frame_info *fi = line_info(p, c, line);
    if (!fi) {
        p->last = PY_ERR_NOMEM;
        return NULL;
    }
    c->last_addrq = addrq;
    c->last_fi = fi;
    return fi;
}
