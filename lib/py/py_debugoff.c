/*
 * py_debugoff.c — builds a py_layout for CPython 3.13+ from the
 * _Py_DebugOffsets block at the start of the target's _PyRuntime
 * (FORMATS.md §7; CPython's Include/internal/pycore_runtime.h in 3.13,
 * pycore_debug_offsets.h in 3.14).
 *
 * The block is a sequence of uint64 fields whose order is fixed per
 * minor version; the field lists below name them in that order (3.13
 * as in the installed 3.13.0 headers; 3.14 adds threads_main,
 * code_object_generation, tlbc_generation, stackpointer, tlbc_index,
 * co_tlbc and set_object).  Later versions are read with the 3.14 list
 * and accepted only when every value passes the plausibility checks in
 * check_layout(); otherwise the attach fails naming the version.
 *
 * A few things the block does not carry are CPython constants that have
 * not changed from 3.11 to 3.14: _PyStackChunk is {previous, size, top,
 * data}, datastack_top follows datastack_chunk in PyThreadState,
 * PyCompactUnicodeObject adds utf8_length and utf8 to PyASCIIObject, and
 * the unicode state bit-field order.
 */
#include "lib/py/py_debugoff.h"

#include <stdio.h>
#include <string.h>

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
    NULL
};

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
    NULL
};

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
    uint64_t hex = py_debugoff_version(buf, len);
    unsigned minor = (unsigned)(hex >> 16) & 0xff;
    dbg d = { buf, len, minor == 13 ? fields_313 : fields_314, 0 };

    if (hex == 0 || minor < 13)
        return -1;
    *out = get(&d, name);
    return d.missing ? -1 : 0;
}

int py_layout_from_debug(const uint8_t *buf, size_t len, py_layout *out, char *err, size_t errlen)
{
    uint64_t hex = py_debugoff_version(buf, len);
    unsigned major = (unsigned)(hex >> 24) & 0xff, minor = (unsigned)(hex >> 16) & 0xff;
    dbg d = { buf, len, minor == 13 ? fields_313 : fields_314, 0 };
    int bad = 0;

    if (hex == 0) {
        snprintf(err, errlen, "no _Py_DebugOffsets cookie at the start of _PyRuntime");
        return -1;
    }
    if (major != 3 || minor < 13) {
        snprintf(err, errlen, "_Py_DebugOffsets claims version %u.%u", major, minor);
        return -1;
    }
    memset(out, 0, sizeof *out);
    out->minor = minor;
    out->headers = "_Py_DebugOffsets";
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
    out->owner_skip_min = 3;               /* FRAME_OWNED_BY_CSTACK (3.13), _INTERPRETER (3.14) */
    out->owner_max = minor == 13 ? 3 : 4;  /* 3.14 adds FRAME_OWNED_BY_CSTACK = 4 */
    out->owner_bottom = minor == 13 ? 1u << 3 : (1u << 3) | (1u << 4); /* entry frames */
    out->code_ptr_mask = minor == 13 ? ~(uint64_t)0 : ~(uint64_t)7; /* 3.14 _PyStackRef tags */
    out->tlbc = minor >= 14 && get(&d, "free_threaded") != 0;

    out->ob_type = off_in(&d, "ob.ob_type", ob, &bad);
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
    out->u_compact_data = out->u_ascii_data + 16;
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
