/*
 * py_debugoff.c — builds a py_layout for CPython 3.13+ from the
 * _Py_DebugOffsets block at the start of the target's _PyRuntime
 * (docs/design/cpython.md §2; CPython's Include/internal/pycore_runtime.h in 3.13,
 * pycore_debug_offsets.h from 3.14).
 *
 * The block is a sequence of uint64 fields whose order is fixed per
 * minor version; the field lists below name them in that order, one per
 * minor, each cited where it was transcribed from.  A version without a
 * list (a newer minor, or a pre-release older than its list) is refused
 * with its version named: reading it with another version's list would
 * misplace every field after the first one that moved.  The block's
 * length follows the list (py_debugoff_size).
 *
 * A few things the block does not carry are CPython constants that have
 * not changed from 3.11 to 3.15: _PyStackChunk is {previous, size, top,
 * data}, datastack_top follows datastack_chunk in PyThreadState, and
 * the unicode state bit-field order; PyCompactUnicodeObject adds
 * utf8_length and utf8 to PyASCIIObject (3.15 publishes its size).
 */
#include "lib/py/py_debugoff.h"

#include <stdio.h>
#include <string.h>

/* CPython 3.13: _Py_DebugOffsets in Include/internal/pycore_runtime.h,
 * transcribed from the v3.13.0 headers installed here (73 slots). */
static const char *const fields_313[] = {
    "cookie", "version", "free_threaded",
    "rt.size", "rt.finalizing", "rt.interpreters_head",
    "is.size", "is.id", "is.next", "is.threads_head", "is.gc", "is.imports_modules",
    "is.sysdict", "is.builtins", "is.ceval_gil", "is.gil_runtime_state",
    "is.gil_runtime_state_enabled", "is.gil_runtime_state_locked", "is.gil_runtime_state_holder",
    "ts.size", "ts.prev", "ts.next", "ts.interp", "ts.current_frame", "ts.thread_id",
    "ts.native_thread_id", "ts.datastack_chunk", "ts.status",
    "if.size", "if.previous", "if.executable", "if.instr_ptr", "if.localsplus", "if.owner",
    "co.size", "co.filename", "co.name", "co.qualname", "co.linetable", "co.firstlineno",
    "co.argcount", "co.localsplusnames", "co.localspluskinds", "co.co_code_adaptive",
    "ob.size", "ob.ob_type",
    "ty.size", "ty.tp_name", "ty.tp_repr", "ty.tp_flags",
    "tu.size", "tu.ob_item", "tu.ob_size",
    "li.size", "li.ob_item", "li.ob_size",
    "di.size", "di.ma_keys", "di.ma_values",
    "fl.size", "fl.ob_fval",
    "lo.size", "lo.lv_tag", "lo.ob_digit",
    "by.size", "by.ob_size", "by.ob_sval",
    "un.size", "un.state", "un.length", "un.asciiobject_size",
    "gc.size", "gc.collecting",
    NULL
};

/* CPython 3.14: Include/internal/pycore_debug_offsets.h (95 slots).  The
 * struct's groups in the order of python/cpython at 7a57f7c (3.14
 * development: threads_main, stackpointer, set_object, gen_object,
 * debugger_support), with the fields the 3.14 releases added
 * (code_object_generation, tlbc_generation, tlbc_index, co_tlbc,
 * llist_node) where the real blocks of 3.14.6 and 3.14.6t recorded in
 * microsoft/PTVS's debugger tests (PyDebugOffsetsTests) put them; those
 * blocks are the golden test data (tests/unit/py/test_py_debugoff.c). */
static const char *const fields_314[] = {
    "cookie", "version", "free_threaded",
    "rt.size", "rt.finalizing", "rt.interpreters_head",
    "is.size", "is.id", "is.next", "is.threads_head", "is.threads_main", "is.gc",
    "is.imports_modules", "is.sysdict", "is.builtins", "is.ceval_gil", "is.gil_runtime_state",
    "is.gil_runtime_state_enabled", "is.gil_runtime_state_locked", "is.gil_runtime_state_holder",
    "is.code_object_generation", "is.tlbc_generation",
    "ts.size", "ts.prev", "ts.next", "ts.interp", "ts.current_frame", "ts.thread_id",
    "ts.native_thread_id", "ts.datastack_chunk", "ts.status",
    "if.size", "if.previous", "if.executable", "if.instr_ptr", "if.localsplus", "if.owner",
    "if.stackpointer", "if.tlbc_index",
    "co.size", "co.filename", "co.name", "co.qualname", "co.linetable", "co.firstlineno",
    "co.argcount", "co.localsplusnames", "co.localspluskinds", "co.co_code_adaptive", "co.co_tlbc",
    "ob.size", "ob.ob_type",
    "ty.size", "ty.tp_name", "ty.tp_repr", "ty.tp_flags",
    "tu.size", "tu.ob_item", "tu.ob_size",
    "li.size", "li.ob_item", "li.ob_size",
    "se.size", "se.used", "se.table", "se.mask",
    "di.size", "di.ma_keys", "di.ma_values",
    "fl.size", "fl.ob_fval",
    "lo.size", "lo.lv_tag", "lo.ob_digit",
    "by.size", "by.ob_size", "by.ob_sval",
    "un.size", "un.state", "un.length", "un.asciiobject_size",
    "gc.size", "gc.collecting",
    "ge.size", "ge.gi_name", "ge.gi_iframe", "ge.gi_frame_state",
    "ll.next", "ll.prev",
    "db.eval_breaker", "db.remote_debugger_support", "db.remote_debugging_enabled",
    "db.debugger_pending_call", "db.debugger_script_path", "db.debugger_script_path_size",
    NULL
};

/* CPython 3.15 from 3.15.0b4 (which inserted last_profiled_frame_seq):
 * Include/internal/pycore_debug_offsets.h of the 3.15 branch, the order
 * as the ordinals documented with microsoft/PTVS's recorded 3.15.0rc1
 * blocks (PyDebugOffsetsTests) and their 888 bytes (111 slots):
 * thread_state gains base_frame, last_profiled_frame and
 * last_profiled_frame_seq after current_frame and holds_gil,
 * gil_requested, current_exception and exc_state after status; a new
 * err_stackitem group; type_object gains tp_basicsize and
 * tp_dictoffset; a new heap_type_object group; unicode gains
 * compactunicodeobject_size; gc gains frame, generation_stats_size and
 * generation_stats. */
static const char *const fields_315[] = {
    "cookie", "version", "free_threaded",
    "rt.size", "rt.finalizing", "rt.interpreters_head",
    "is.size", "is.id", "is.next", "is.threads_head", "is.threads_main", "is.gc",
    "is.imports_modules", "is.sysdict", "is.builtins", "is.ceval_gil", "is.gil_runtime_state",
    "is.gil_runtime_state_enabled", "is.gil_runtime_state_locked", "is.gil_runtime_state_holder",
    "is.code_object_generation", "is.tlbc_generation",
    "ts.size", "ts.prev", "ts.next", "ts.interp", "ts.current_frame", "ts.base_frame",
    "ts.last_profiled_frame", "ts.last_profiled_frame_seq", "ts.thread_id",
    "ts.native_thread_id", "ts.datastack_chunk", "ts.status", "ts.holds_gil",
    "ts.gil_requested", "ts.current_exception", "ts.exc_state",
    "es.exc_value",
    "if.size", "if.previous", "if.executable", "if.instr_ptr", "if.localsplus", "if.owner",
    "if.stackpointer", "if.tlbc_index",
    "co.size", "co.filename", "co.name", "co.qualname", "co.linetable", "co.firstlineno",
    "co.argcount", "co.localsplusnames", "co.localspluskinds", "co.co_code_adaptive", "co.co_tlbc",
    "ob.size", "ob.ob_type",
    "ty.size", "ty.tp_name", "ty.tp_repr", "ty.tp_flags", "ty.tp_basicsize", "ty.tp_dictoffset",
    "ht.size", "ht.ht_cached_keys",
    "tu.size", "tu.ob_item", "tu.ob_size",
    "li.size", "li.ob_item", "li.ob_size",
    "se.size", "se.used", "se.table", "se.mask",
    "di.size", "di.ma_keys", "di.ma_values",
    "fl.size", "fl.ob_fval",
    "lo.size", "lo.lv_tag", "lo.ob_digit",
    "by.size", "by.ob_size", "by.ob_sval",
    "un.size", "un.state", "un.length", "un.asciiobject_size", "un.compactunicodeobject_size",
    "gc.size", "gc.collecting", "gc.frame", "gc.generation_stats_size", "gc.generation_stats",
    "ge.size", "ge.gi_name", "ge.gi_iframe", "ge.gi_frame_state",
    "ll.next", "ll.prev",
    "db.eval_breaker", "db.remote_debugger_support", "db.remote_debugging_enabled",
    "db.debugger_pending_call", "db.debugger_script_path", "db.debugger_script_path_size",
    NULL
};

/* Which list a version uses: the first entry whose minor matches and
 * whose first_hex the version reaches.  A minor not here, or a
 * pre-release before first_hex, has no list: it is refused by name. */
static const struct debug_list {
    unsigned minor;
    uint64_t first_hex;
    const char *const *names;
    const char *since;    /* for messages */
    const char *source;   /* py_layout.headers: says where the layout came from */
} lists[] = {
    { 13, 0x030d0000, fields_313, "3.13", "_Py_DebugOffsets (3.13 list)" },
    /* 3.14's fields were settled by its release candidates (the
     * development header above still lacked several) */
    { 14, 0x030e00c1, fields_314, "3.14.0rc1", "_Py_DebugOffsets (3.14 list)" },
    { 15, 0x030f00b4, fields_315, "3.15.0b4", "_Py_DebugOffsets (3.15 list, from 3.15.0b4)" },
};

#define NLISTS (sizeof lists / sizeof lists[0])

static const struct debug_list *list_for(uint64_t hex)
{
    unsigned minor = (unsigned)(hex >> 16) & 0xff;

    if ((hex >> 24) != 3)
        return NULL;
    for (size_t i = 0; i < NLISTS; i++)
        if (lists[i].minor == minor && hex >= lists[i].first_hex)
            return &lists[i];
    return NULL;
}

static size_t list_bytes(const char *const *names)
{
    size_t n = 0;
    while (names[n])
        n++;
    return n * 8;
}

void py_version_format(uint64_t hex, char *out, size_t n)
{
    unsigned level = (unsigned)(hex >> 4) & 0xf, serial = (unsigned)hex & 0xf;
    const char *lv = level == 0xa ? "a" : level == 0xb ? "b" : level == 0xc ? "rc" : "";
    if (*lv)
        snprintf(out, n, "%u.%u.%u%s%u", (unsigned)(hex >> 24) & 0xff, (unsigned)(hex >> 16) & 0xff,
                 (unsigned)(hex >> 8) & 0xff, lv, serial);
    else
        snprintf(out, n, "%u.%u.%u", (unsigned)(hex >> 24) & 0xff, (unsigned)(hex >> 16) & 0xff,
                 (unsigned)(hex >> 8) & 0xff);
}

size_t py_debugoff_size(uint64_t hex, char *err, size_t errlen)
{
    const struct debug_list *l = list_for(hex);
    unsigned minor = (unsigned)(hex >> 16) & 0xff;
    const struct debug_list *newest = &lists[NLISTS - 1];
    char v[32];

    if (l)
        return list_bytes(l->names);
    py_version_format(hex, v, sizeof v);
    if ((hex >> 24) != 3 || minor < lists[0].minor)
        snprintf(err, errlen, "_Py_DebugOffsets claims version %s, which has none", v);
    else if (minor > newest->minor)
        snprintf(err, errlen, "CPython %s is newer than this trec knows: its _Py_DebugOffsets "
                 "(the layout trc reads) is not supported yet (known: 3.%u to 3.%u)", v,
                 lists[0].minor, newest->minor);
    else
        for (size_t i = 0; i < NLISTS; i++)
            if (lists[i].minor == minor)
                snprintf(err, errlen, "CPython %s is a pre-release whose _Py_DebugOffsets this "
                         "trec does not know (3.%u is supported from %s)", v, minor,
                         lists[i].since);
    return 0;
}

typedef struct dbg {
    const uint8_t *buf;
    size_t len;
    const char *const *names;
    int missing;   /* a looked-up name was not in the list or the buffer */
} dbg;

static uint64_t get(dbg *d, const char *name)
{
    for (size_t i = 0; d->names[i]; i++) {
        if (strcmp(d->names[i], name) != 0)
            continue;
        if ((i + 1) * 8 > d->len)
            break;
        uint64_t v;
        memcpy(&v, d->buf + i * 8, 8);
        return v;
    }
    d->missing = 1;
    return 0;
}

/* Offset field that must lie inside a struct of `size` bytes. */
static uint32_t off_in(dbg *d, const char *name, uint64_t size, int *bad)
{
    uint64_t v = get(d, name);
    if (v + 8 > size || v > UINT32_MAX)
        *bad = 1;
    return (uint32_t)v;
}

uint64_t py_debugoff_version(const uint8_t *buf, size_t len)
{
    uint64_t v;

    if (len < 16 || memcmp(buf, PY_DEBUG_COOKIE, 8) != 0)
        return 0;
    memcpy(&v, buf + 8, 8);
    return v;
}

int py_debugoff_field(const uint8_t *buf, size_t len, const char *name, uint64_t *out)
{
    const struct debug_list *l = list_for(py_debugoff_version(buf, len));
    if (!l)
        return -1;
    dbg d = { buf, len, l->names, 0 };

    *out = get(&d, name);
    return d.missing ? -1 : 0;
}

int py_layout_from_debug(const uint8_t *buf, size_t len, py_layout *out, char *err, size_t errlen)
{
    uint64_t hex = py_debugoff_version(buf, len);
    unsigned major = (unsigned)(hex >> 24) & 0xff, minor = (unsigned)(hex >> 16) & 0xff;
    const struct debug_list *l = list_for(hex);
    int bad = 0;

    if (hex == 0) {
        snprintf(err, errlen, "no _Py_DebugOffsets cookie at the start of _PyRuntime");
        return -1;
    }
    size_t need = py_debugoff_size(hex, err, errlen);
    if (!l || need == 0)
        return -1;
    if (len < need) {
        snprintf(err, errlen, "the _Py_DebugOffsets of CPython %u.%u are %zu bytes, only %zu read",
                 major, minor, need, len);
        return -1;
    }
    dbg d = { buf, len, l->names, 0 };
    memset(out, 0, sizeof *out);
    out->minor = minor;
    out->headers = l->source;
    out->lasti_kind = PY_LASTI_POINTER;
    out->lines_kind = PY_LINES_LOCATIONS;
    out->use_qualname = 1;
    out->frame_objects = 0;

    uint64_t rt = get(&d, "rt.size"), is = get(&d, "is.size"), ts = get(&d, "ts.size");
    uint64_t fr = get(&d, "if.size"), co = get(&d, "co.size"), ob = get(&d, "ob.size");
    uint64_t by = get(&d, "by.size"), un = get(&d, "un.size");
    int free_threaded = get(&d, "free_threaded") != 0;
    if (rt < 64 || rt > (64u << 20) || is < 64 || is > (64u << 20) || ts < 64 || ts > 65536 ||
        fr < 32 || fr > 1024 || co < 64 || co > 4096 || ob < 16 || ob > 64 || by < 24 ||
        by > 128 || un < 24 || un > 256)
        bad = 1;

    out->rt_interp_head = off_in(&d, "rt.interpreters_head", rt, &bad);
    out->rt_tstate_current = PY_OFF_NONE;
    out->rt_finalizing = off_in(&d, "rt.finalizing", rt, &bad);
    out->is_next = off_in(&d, "is.next", is, &bad);
    out->is_tstate_head = off_in(&d, "is.threads_head", is, &bad);
    out->is_ceval_gil = off_in(&d, "is.ceval_gil", is, &bad);
    uint64_t gil = get(&d, "is.gil_runtime_state");
    uint64_t locked = get(&d, "is.gil_runtime_state_locked");
    uint64_t holder = get(&d, "is.gil_runtime_state_holder");
    if (locked < gil || holder < gil || locked - gil > 256 || holder - gil > 256)
        bad = 1;
    out->gil_locked = (uint32_t)(locked - gil);
    out->gil_last_holder = (uint32_t)(holder - gil);
    /* Free-threaded builds only: unlike locked and holder this one is
     * an offset inside struct _gil_runtime_state (its first field, 0),
     * and 0 in the other builds means "none". */
    out->gil_enabled = PY_OFF_NONE;
    if (free_threaded) {
        uint64_t en = get(&d, "is.gil_runtime_state_enabled");
        if (en > 256)
            bad = 1;
        out->gil_enabled = (uint32_t)en;
    }

    out->ts_prev = off_in(&d, "ts.prev", ts, &bad);
    out->ts_next = off_in(&d, "ts.next", ts, &bad);
    out->ts_interp = off_in(&d, "ts.interp", ts, &bad);
    out->ts_frame = PY_OFF_NONE;
    out->ts_cframe = PY_OFF_NONE;
    out->cf_current_frame = PY_OFF_NONE;
    out->ts_current_frame = off_in(&d, "ts.current_frame", ts, &bad);
    out->ts_thread_id = off_in(&d, "ts.thread_id", ts, &bad);
    out->ts_id = PY_OFF_NONE;
    out->ts_native_thread_id = off_in(&d, "ts.native_thread_id", ts, &bad);
    out->ts_datastack_chunk = off_in(&d, "ts.datastack_chunk", ts, &bad);
    out->ts_base_frame = minor >= 15 ? off_in(&d, "ts.base_frame", ts, &bad) : 0;
    if (minor >= 15 && out->ts_base_frame == 0)
        bad = 1;
    out->ts_datastack_top = out->ts_datastack_chunk + 8;
    if (out->ts_datastack_top + 8 > ts)
        bad = 1;
    out->sc_size = 8;
    out->sc_data = 24;

    out->fo_back = out->fo_code = out->fo_lasti = out->fo_state = PY_OFF_NONE;
    out->if_previous = off_in(&d, "if.previous", fr, &bad);
    out->if_code = off_in(&d, "if.executable", fr, &bad);
    out->if_instr = off_in(&d, "if.instr_ptr", fr, &bad);
    out->if_owner = (uint32_t)get(&d, "if.owner");
    if (out->if_owner >= fr)
        bad = 1;
    out->if_size = (uint32_t)get(&d, "if.localsplus");
    if (out->if_size > fr || out->if_size <= out->if_owner)
        bad = 1;
    /* Owners: 3.13 THREAD 0, GENERATOR 1, FRAME_OBJECT 2, CSTACK 3 (an
     * entry frame); 3.14 INTERPRETER 3 (entry frames), CSTACK 4; 3.15
     * drops CSTACK: every stack bottoms out in the interpreter-owned
     * base frame (3). */
    out->owner_skip_min = 3;
    out->owner_max = minor == 14 ? 4 : 3;
    out->owner_bottom = minor == 14 ? (1u << 3) | (1u << 4) : 1u << 3;
    out->code_ptr_mask = minor == 13 ? ~(uint64_t)0 : ~(uint64_t)7; /* 3.14 _PyStackRef tags */
    out->free_threaded = (uint32_t)free_threaded;
    out->tlbc = minor >= 14 && free_threaded;
    out->if_tlbc_index = out->co_tlbc = PY_OFF_NONE;
    if (out->tlbc) {
        out->if_tlbc_index = off_in(&d, "if.tlbc_index", fr, &bad);
        out->co_tlbc = off_in(&d, "co.co_tlbc", co, &bad);
    }

    out->ob_type = off_in(&d, "ob.ob_type", ob, &bad);
    out->tp_name = off_in(&d, "ty.tp_name", get(&d, "ty.size"), &bad);
    out->ob_size = off_in(&d, "by.ob_size", by, &bad);
    out->co_firstlineno = (uint32_t)get(&d, "co.firstlineno");
    if (out->co_firstlineno + 4 > co)
        bad = 1;
    /* Not among the debug offsets.  In 3.13's PyCodeObject it follows
     * co_firstlineno and five more ints (co_nlocalsplus, co_framesize,
     * co_nlocals, co_ncellvars, co_nfreevars), in every build; later
     * versions are not assumed to keep it there (the code cache then
     * checks the strings instead, py_code.c). */
    out->co_version = minor == 13 && out->co_firstlineno + 28 <= co ? out->co_firstlineno + 24
                                                                      : PY_OFF_NONE;
    out->co_filename = off_in(&d, "co.filename", co, &bad);
    out->co_name = off_in(&d, "co.name", co, &bad);
    out->co_qualname = off_in(&d, "co.qualname", co, &bad);
    out->co_lines = off_in(&d, "co.linetable", co, &bad);
    out->co_code_adaptive = (uint32_t)get(&d, "co.co_code_adaptive");
    if (out->co_code_adaptive > co)
        bad = 1;
    out->by_sval = (uint32_t)get(&d, "by.ob_sval");
    if (out->by_sval >= by)
        bad = 1;

    out->u_length = off_in(&d, "un.length", un, &bad);
    out->u_state = (uint32_t)get(&d, "un.state");
    out->u_ascii_data = (uint32_t)get(&d, "un.asciiobject_size");
    if (out->u_state + 4 > out->u_ascii_data || out->u_ascii_data > un)
        bad = 1;
    /* 3.15 publishes sizeof(PyCompactUnicodeObject); before, it is
     * PyASCIIObject plus utf8_length and utf8 */
    uint64_t cu = 0;
    out->u_compact_data = out->u_ascii_data + 16;
    if (minor >= 15 && ((cu = get(&d, "un.compactunicodeobject_size")) < out->u_ascii_data ||
                        cu > un))
        bad = 1;
    else if (cu)
        out->u_compact_data = (uint32_t)cu;
    out->u_legacy_data = out->u_compact_data;
    /* 3.14's free-threaded build makes `interned` a whole byte. */
    int shift = free_threaded && minor >= 14 ? 8 : 2;
    out->u_kind_shift = (uint32_t)shift;
    out->u_compact_bit = (uint32_t)shift + 3;
    out->u_ascii_bit = (uint32_t)shift + 4;
    out->u_ready_bit = PY_OFF_NONE;

    if (d.missing || bad) {
        snprintf(err, errlen,
                 "the _Py_DebugOffsets of CPython %u.%u do not have a layout this build of trc "
                 "knows (%s)", major, minor, d.missing ? "block too short" : "implausible offsets");
        return -1;
    }
    return 0;
}
