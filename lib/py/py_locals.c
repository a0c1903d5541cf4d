/*
 * py_locals.c — the local variables of each frame of a thread, by name
 * (lib/py/py_values.h: py_proc_locals), for `trec --dump --locals`.
 *
 * Where a frame keeps its locals: before 3.11 the frame object's
 * f_localsplus, named by the code object's co_varnames (the first
 * len(co_varnames) slots); from 3.11 the interpreter frame's localsplus,
 * named by co_localsplusnames, of which the slots whose kind
 * (co_localspluskinds) has CO_FAST_LOCAL, CO_FAST_CELL or CO_FAST_FREE
 * are shown (3.13's hidden comprehension temporaries are left out).
 *
 * Closures: a variable an inner function shares (a cell variable) and
 * one taken from an enclosing function (a free variable) live in a
 * cell object in their slot, and are shown by what the cell holds
 * ("<unbound>" when it is empty), as Python's own locals() shows them.
 * Before 3.11 their slots follow the locals' (co_cellvars' names, then
 * co_freevars'); an argument that is also a cell is named in both
 * co_varnames and co_cellvars, its plain slot emptied when the frame
 * began, so it is shown once, from its cell.  From 3.11 a cell or free
 * slot holds the cell once the function's first instructions
 * (MAKE_CELL, COPY_FREE_VARS) ran; before that, what is in the slot is
 * shown as it is.
 *
 * 3.13 and later publish where these fields are in _Py_DebugOffsets:
 * for 3.13 the generated table (3.13t's for a free-threaded build) must
 * agree with the target's block (or no locals are read), and 3.14/3.15
 * take them from the block alone, the rest from 3.13's or 3.13t's table
 * (the kind bits CO_FAST_*, PyCellObject.ob_ref: unchanged in 3.14's
 * headers; docs/design/cpython.md §11), with the object-model table
 * py_objlayout_from_debug makes.  From 3.14 a frame's slots are
 * _PyStackRef, an object pointer whose low bits are tags (a reference
 * not counted; a free-threaded build's NULL may carry one): as the
 * walker masks f_executable, the slots are masked (code_ptr_mask).
 *
 * The frames are walked again here, on demand and apart from the
 * stack read, with the walker's checks that matter for a one-off read
 * (frame and code object types, frame owners, a bounded chain): the
 * caller matches the functions against the stack it printed and drops
 * the locals of a stack that moved in between.
 */
#include "lib/py/py_debugoff.h"
#include "lib/py/py_internal.h"
#include "lib/py/py_objlayout.h"
#include "lib/py/py_values.h"

#include "lib/util/alloc.h"

#include <inttypes.h>
#include <stddef.h>
#include <string.h>

/* Names of one frame at most (a function with more locals shows these). */
#define LOCALS_MAX 1024

static int rd64(py_proc *p, uint64_t addr, uint64_t *v)
{
    uint8_t b[8];
    if (addr == 0 || pymem_read(&p->mem, addr, b, 8) != 0)
        return -1;
    *v = pysnap_u64(b, 0);
    return 0;
}

/* The items of the tuple at addr (at most max) into items and its
 * length into *len; the count read, or -1 when it is not a readable
 * tuple. */
static int64_t tuple_items(py_proc *p, const py_vallayout *V, uint64_t addr, uint64_t *items,
                           int64_t max, int64_t *len)
{
    uint64_t type, n;
    if (rd64(p, addr + p->L.ob_type, &type) != 0 || type != p->tuple_type ||
        rd64(p, addr + p->L.ob_size, &n) != 0 || (int64_t)n < 0)
        return -1;
    *len = (int64_t)n;
    int64_t k = (int64_t)n < max ? (int64_t)n : max;
    if (k && pymem_read(&p->mem, addr + V->tu_items, items, (size_t)k * 8) != 0)
        return -1;
    return k;
}

/* Bytes of the code-object names kept for the frame walked last: deep
 * recursion and thread pools run the same code in frame after frame,
 * whose names are then read once. */
#define NAMES_TEXT 16384

typedef struct frame_walk {
    py_proc *p;
    const py_vallayout *V;
    pyval_ctx vc;
    uint32_t co_need;            /* bytes of a code object read: every field used */
    uint64_t names[LOCALS_MAX], values[LOCALS_MAX];
    char value[PYVAL_TEXT_MAX];
    /* the code object whose names are known: its address, the fields
     * they came from (all must be unchanged for them to be used) */
    uint64_t c_code, c_fname, c_names_at, c_kinds_at, c_cells_at, c_frees_at;
    int c_valid;
    int64_t c_n;                 /* slots named */
    uint8_t c_local[LOCALS_MAX]; /* slot i: SLOT_HIDDEN, SLOT_VALUE or SLOT_CELL */
    uint32_t c_off[LOCALS_MAX];  /* its name in c_text */
    char c_func[1024];
    char c_text[NAMES_TEXT];
} frame_walk;

/* What a slot holds, as shown: not at all, its value, or a cell whose
 * contents are the value. */
enum { SLOT_HIDDEN = 0, SLOT_VALUE = 1, SLOT_CELL = 2 };

/* ≤3.10: the names of the cell and free variables, whose slots follow
 * the n locals', into fw->names from n and their kinds; the slots named
 * in all, or -1 when a tuple cannot be read.  Those beyond LOCALS_MAX
 * are left out. */
static int64_t closure_names(frame_walk *fw, int64_t n, int64_t nlocals)
{
    uint64_t at[2] = {fw->c_cells_at, fw->c_frees_at};
    if (n < nlocals) /* the locals were cut: the slots after them are not known */
        return n;
    for (int k = 0; k < 2; k++) {
        int64_t len, got = tuple_items(fw->p, fw->V, at[k], fw->names + n, LOCALS_MAX - n, &len);
        if (got < 0)
            return -1;
        memset(fw->c_local + n, SLOT_CELL, (size_t)got);
        n += got;
        if (got < len)
            break;
    }
    return n;
}

/* Reads the names of the code object whose header (co_need bytes) is
 * hdr into the cache.  0, or -1 when they cannot be read. */
static int learn_code(frame_walk *fw, uint64_t code, const uint8_t *hdr)
{
    py_proc *p = fw->p;
    const py_layout *L = &p->L;
    const py_vallayout *V = fw->V;
    fw->c_valid = 0;
    fw->c_code = code;
    fw->c_fname = pysnap_u64(hdr, L->use_qualname ? L->co_qualname : L->co_name);
    fw->c_names_at = pysnap_u64(hdr, L->frame_objects ? V->co_varnames : V->co_localsplusnames);
    fw->c_kinds_at = L->frame_objects ? 0 : pysnap_u64(hdr, V->co_localspluskinds);
    fw->c_cells_at = L->frame_objects ? pysnap_u64(hdr, V->co_cellvars) : 0;
    fw->c_frees_at = L->frame_objects ? pysnap_u64(hdr, V->co_freevars) : 0;
    if (pystr_read(p, fw->c_fname, fw->c_func, sizeof fw->c_func) != 0)
        return -1;
    int64_t nlocals, n = tuple_items(p, V, fw->c_names_at, fw->names, LOCALS_MAX, &nlocals);
    if (n < 0)
        return -1;
    if (L->frame_objects) {
        memset(fw->c_local, SLOT_VALUE, (size_t)n);
        if ((n = closure_names(fw, n, nlocals)) < 0)
            return -1;
    } else {
        uint64_t ktype, kn;
        if (rd64(p, fw->c_kinds_at + L->ob_type, &ktype) != 0 || ktype != p->bytes_type ||
            rd64(p, fw->c_kinds_at + L->ob_size, &kn) != 0 || (int64_t)kn < n ||
            (n && pymem_read(&p->mem, fw->c_kinds_at + L->by_sval, fw->c_local, (size_t)n) != 0))
            return -1;
        for (int64_t i = 0; i < n; i++) {
            uint8_t kind = fw->c_local[i];
            fw->c_local[i] = (kind & V->fast_hidden)                     ? SLOT_HIDDEN
                             : (kind & (V->fast_cell | V->fast_free))   ? SLOT_CELL
                             : (kind & V->fast_local)                   ? SLOT_VALUE
                                                                        : SLOT_HIDDEN;
        }
    }
    size_t used = 0;
    for (int64_t i = 0; i < n; i++) {
        if (!fw->c_local[i])
            continue;
        if (used >= sizeof fw->c_text - 1 ||
            pystr_read(p, fw->names[i], fw->c_text + used, sizeof fw->c_text - used) != 0)
            return -1;
        fw->c_off[i] = (uint32_t)used;
        used += strlen(fw->c_text + used) + 1;
    }
    /* ≤3.10: an argument that is also a cell is shown from its cell */
    for (int64_t c = 0; L->frame_objects && c < n; c++)
        for (int64_t i = 0; fw->c_local[c] == SLOT_CELL && i < nlocals && i < n; i++)
            if (fw->c_local[i] == SLOT_VALUE &&
                strcmp(fw->c_text + fw->c_off[i], fw->c_text + fw->c_off[c]) == 0)
                fw->c_local[i] = SLOT_HIDDEN;
    fw->c_n = n;
    fw->c_valid = 1;
    return 0;
}

/* The names of the code object at code (header hdr): the cache, when it
 * holds this object with the same fields, else read now.  0, or -1. */
static int code_names(frame_walk *fw, uint64_t code, const uint8_t *hdr)
{
    const py_layout *L = &fw->p->L;
    const py_vallayout *V = fw->V;
    if (fw->c_valid && fw->c_code == code &&
        fw->c_fname == pysnap_u64(hdr, L->use_qualname ? L->co_qualname : L->co_name) &&
        fw->c_names_at == pysnap_u64(hdr, L->frame_objects ? V->co_varnames
                                                           : V->co_localsplusnames) &&
        (L->frame_objects ? fw->c_cells_at == pysnap_u64(hdr, V->co_cellvars) &&
                                fw->c_frees_at == pysnap_u64(hdr, V->co_freevars)
                          : fw->c_kinds_at == pysnap_u64(hdr, V->co_localspluskinds)))
        return 0;
    return learn_code(fw, code, hdr);
}

/* The locals of the frame at frame, whose code's names are in the
 * cache, as callbacks.  0, or -1 when its slots could not be read. */
static int frame_locals(frame_walk *fw, int depth, uint64_t frame, py_local_fn on_local,
                        void *ctx)
{
    py_proc *p = fw->p;
    int64_t n = fw->c_n;
    uint64_t slots = frame + (p->L.frame_objects ? fw->V->fo_localsplus : fw->V->if_localsplus);
    if (n && pymem_read(&p->mem, slots, fw->values, (size_t)n * 8) != 0)
        return -1;
    for (int64_t i = 0; i < n; i++) {
        if (fw->c_local[i] == SLOT_HIDDEN)
            continue;
        uint64_t v = fw->values[i] & p->L.code_ptr_mask, type;
        if (fw->c_local[i] == SLOT_CELL && v && p->cell_type &&
            rd64(p, v + p->L.ob_type, &type) == 0 && type == p->cell_type &&
            rd64(p, v + fw->V->ce_ref, &v) != 0) {
            snprintf(fw->value, sizeof fw->value, "<unreadable cell at 0x%" PRIx64 ">",
                     fw->values[i]);
            on_local(ctx, depth, fw->c_text + fw->c_off[i], fw->value);
            continue;
        }
        if (v == 0)
            snprintf(fw->value, sizeof fw->value, "<unbound>");
        else
            pyval_format(&fw->vc, v, fw->value, sizeof fw->value);
        on_local(ctx, depth, fw->c_text + fw->c_off[i], fw->value);
    }
    return 0;
}

/* The innermost frame of the thread state at tstate. */
static int first_frame(py_proc *p, uint64_t tstate, uint64_t *frame)
{
    const py_layout *L = &p->L;
    if (L->frame_objects)
        return rd64(p, tstate + L->ts_frame, frame);
    if (L->ts_current_frame != PY_OFF_NONE)
        return rd64(p, tstate + L->ts_current_frame, frame);
    uint64_t cf;
    if (rd64(p, tstate + L->ts_cframe, &cf) != 0)
        return -1;
    *frame = 0;
    return cf ? rd64(p, cf + L->cf_current_frame, frame) : 0;
}

/* The field name of _Py_DebugOffsets and where it goes in V. */
static const struct {
    const char *name;
    size_t at;
} debug_fields[] = {
    {"if.localsplus", offsetof(py_vallayout, if_localsplus)},
    {"co.localsplusnames", offsetof(py_vallayout, co_localsplusnames)},
    {"co.localspluskinds", offsetof(py_vallayout, co_localspluskinds)},
    {"ty.tp_name", offsetof(py_vallayout, tp_name)},
    {"tu.ob_item", offsetof(py_vallayout, tu_items)},
    {"li.ob_item", offsetof(py_vallayout, li_items)},
    {"fl.ob_fval", offsetof(py_vallayout, fl_fval)},
};

/* 3.13+: V and O from the target's _Py_DebugOffsets (see the top).  0,
 * or -1 when the block cannot be read, lacks a field, or (3.13)
 * disagrees with the generated table. */
static int layouts_from_debug(py_proc *p, py_vallayout *V, py_objlayout *O)
{
    uint8_t blk[PY_DEBUG_READ];
    char why[200];
    const py_vallayout *base = p->L.free_threaded ? py_vallayout_313t() : py_vallayout_for_minor(13);
    if (!base || pymem_read(&p->mem, p->runtime, blk, 16) != 0)
        return -1;
    uint64_t hex = py_debugoff_version(blk, 16);
    size_t len = hex ? py_debugoff_size(hex, why, sizeof why) : 0;
    if (len == 0 || len > sizeof blk || pymem_read(&p->mem, p->runtime, blk, len) != 0)
        return -1;
    *V = *base;
    V->minor = p->L.minor;
    V->headers = "_Py_DebugOffsets";
    for (size_t i = 0; i < sizeof debug_fields / sizeof debug_fields[0]; i++) {
        uint64_t v;
        if (py_debugoff_field(blk, len, debug_fields[i].name, &v) != 0 || v > 4096)
            return -1;
        uint32_t v32 = (uint32_t)v;
        memcpy((uint8_t *)V + debug_fields[i].at, &v32, sizeof v32);
    }
    if (p->L.minor == 13) {
        /* the headers' table and the target's block describe one layout */
        for (size_t i = 0; i < sizeof debug_fields / sizeof debug_fields[0]; i++)
            if (memcmp((const uint8_t *)V + debug_fields[i].at,
                       (const uint8_t *)base + debug_fields[i].at, sizeof(uint32_t)) != 0)
                return -1;
        *O = p->L.free_threaded ? *py_objlayout_313t() : *py_objlayout_for_minor(13);
        return 0;
    }
    return py_objlayout_from_debug(blk, len, O);
}

int py_proc_locals(py_proc *p, uint64_t tstate, int max, py_frame_fn on_frame,
                   py_local_fn on_local, void *ctx)
{
    const py_layout *L = &p->L;
    py_vallayout dv;
    py_objlayout dobj;
    const py_vallayout *V = py_vallayout_for_minor(L->minor);
    const py_objlayout *O = py_objlayout_for_minor(L->minor);
    if (L->minor >= 13) {
        if (layouts_from_debug(p, &dv, &dobj) != 0)
            return py_fail(p, PY_ERR_VERSION);
        V = &dv;
        O = &dobj;
    }
    /* no value layout for this version; or a table that does not agree
     * with the walker's on where interpreter frames keep their locals */
    if (!V || !O || (!L->frame_objects && V->if_localsplus != L->if_size))
        return py_fail(p, PY_ERR_VERSION);
    frame_walk *fw = trc_malloc(sizeof *fw);
    if (!fw)
        return py_fail(p, PY_ERR_NOMEM);
    fw->p = p;
    fw->V = V;
    fw->c_valid = 0;
    fw->co_need = L->ob_type + 8;
    uint32_t fields[] = {L->use_qualname ? L->co_qualname : L->co_name,
                         L->frame_objects ? V->co_varnames : V->co_localsplusnames,
                         L->frame_objects ? V->co_cellvars : V->co_localspluskinds,
                         L->frame_objects ? V->co_freevars : V->co_localspluskinds};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (fields[i] + 8 > fw->co_need)
            fw->co_need = fields[i] + 8;
    fw->vc = (pyval_ctx){&p->mem, L, O, V, p->none_type, p->bool_type, p->long_type,
                         p->float_type, p->unicode_type, p->bytes_type, p->tuple_type,
                         p->list_type, p->dict_type};
    uint64_t frame;
    int depth = 0, rc = -1;
    uint8_t fr[1024], hdr[1024];
    if (p->fr_len > sizeof fr || fw->co_need > sizeof hdr || first_frame(p, tstate, &frame) != 0)
        goto out;
    /* a chain longer than the frames asked for is cut there; one longer
     * than any stack (a cycle read from reused memory) ends at max too */
    while (frame && depth < max) {
        if ((frame & 7) || pymem_read(&p->mem, frame, fr, p->fr_len) != 0)
            goto out;
        uint64_t code, prev;
        int python = 1;
        if (L->frame_objects) {
            if (pysnap_u64(fr, L->ob_type) != p->frame_type)
                goto out;
            code = pysnap_u64(fr, L->fo_code);
            prev = pysnap_u64(fr, L->fo_back);
        } else {
            unsigned owner = fr[L->if_owner];
            if (owner > L->owner_max)
                goto out;
            code = pysnap_u64(fr, L->if_code) & L->code_ptr_mask;
            prev = pysnap_u64(fr, L->if_previous);
            python = owner < L->owner_skip_min;
        }
        if (python) {
            if ((code & 7) || pymem_read(&p->mem, code, hdr, fw->co_need) != 0 ||
                pysnap_u64(hdr, L->ob_type) != p->code_type)
                goto out;
            if (code_names(fw, code, hdr) != 0) {
                /* the function's name is what matches the frame to the stack */
                if (pystr_read(p, fw->c_fname, fw->c_func, sizeof fw->c_func) != 0)
                    goto out;
                on_frame(ctx, depth, fw->c_func, 0);
                on_frame(ctx, depth, NULL, -1);
            } else {
                on_frame(ctx, depth, fw->c_func, 0);
                if (frame_locals(fw, depth, frame, on_local, ctx) != 0)
                    on_frame(ctx, depth, NULL, -1);
            }
            depth++;
        }
        frame = prev;
    }
    rc = depth;
out:
    trc_free(fw);
    return rc < 0 ? py_fail(p, PY_ERR_IO) : rc;
}
