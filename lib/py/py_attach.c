/*
 * py_attach.c — finding a CPython runtime in a process and choosing its
 * layout, without running anything in or of the target (docs/design/cpython.md
 * §1, §2; docs/design/architecture.md §4).
 *
 *  1. /proc/PID/maps: candidate files are a mapped libpython* and the
 *     executable (/proc/PID/exe).  Each is opened through /proc/PID/root
 *     so a target in another mount namespace (container) works.
 *  2. _PyRuntime in the file's .dynsym (or .symtab, or via PT_DYNAMIC).
 *     Its runtime address = load address of the file's offset-0 mapping
 *     − first PT_LOAD p_vaddr (page aligned) + symbol value.
 *  3. Version: Py_Version (3.11+) read from the target; before 3.11 the
 *     minor comes from the file name (libpython3.X / python3.X) and the
 *     exact string from the file's read-only data.  3.13+ must agree
 *     with the version in _Py_DebugOffsets, which supplies the layout.
 *  4. The layout is checked against the live process: the first thread
 *     state must point back to its interpreter.  A mismatch is a
 *     PY_ERR_VERSION error, never a silent guess.
 */
#include "lib/py/py_internal.h"

#include "lib/py/py_debugoff.h"
#include "lib/py/py_elf.h"
#include "lib/py/py_maps.h"
#include "lib/util/alloc.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ATTACH_TRIES 5   /* validation retries against a running target */

py_status py_status_from_errno(int e)
{
    switch (e) {
    case EPERM:
    case EACCES: return PY_ERR_PERM;
    case ESRCH:
    case ENOENT: return PY_ERR_GONE;
    case ENOMEM: return PY_ERR_NOMEM;
    default: return PY_ERR_IO;
    }
}

static py_status perm_error(pid_t pid, char *err, size_t errlen)
{
    py_perm_facts f;
    py_perm_facts_read(pid, &f);
    py_perm_explain(&f, err, errlen);
    return PY_ERR_PERM;
}

static py_status read_error(py_proc *p, int e, char *err, size_t errlen)
{
    py_status st = py_status_from_errno(e);

    if (st == PY_ERR_PERM)
        return perm_error(p->pid, err, errlen);
    if (st == PY_ERR_GONE)
        snprintf(err, errlen, "pid %d: the process exited", (int)p->pid);
    else
        snprintf(err, errlen, "pid %d: cannot read its memory: %s", (int)p->pid, strerror(e));
    return st;
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* Minor version from "libpython3.X..." or "python3.X...", else -1;
 * *major gets the major digit. */
static int name_minor(const char *path, int *major)
{
    const char *b = base_name(path);
    const char *v = NULL;

    if (strncmp(b, "libpython", 9) == 0)
        v = b + 9;
    else if (strncmp(b, "python", 6) == 0)
        v = b + 6;
    if (!v || (v[0] != '2' && v[0] != '3'))
        return -1;
    *major = v[0] - '0';
    if (v[1] != '.' || v[2] < '0' || v[2] > '9')
        return -1;
    int m = 0;
    for (v += 2; *v >= '0' && *v <= '9' && m < 1000; v++)
        m = m * 10 + (*v - '0');
    return m;
}

static int open_elf(pid_t pid, const pymap *m, const char *path, pyelf *e)
{
    char fn[PATH_MAX + 64], why[256];

    snprintf(fn, sizeof fn, "/proc/%d/root%s", (int)pid, path);
    if (pyelf_open(e, fn, why, sizeof why) == 0)
        return 0;
    if (m) {
        snprintf(fn, sizeof fn, "/proc/%d/map_files/%llx-%llx", (int)pid,
                 (unsigned long long)m->start, (unsigned long long)m->end);
        if (pyelf_open(e, fn, why, sizeof why) == 0)
            return 0;
    }
    return pyelf_open(e, path, why, sizeof why);
}

typedef struct found {
    char path[PATH_MAX];
    uint64_t bias, runtime, py_version;
    int has_py_version;
    int by_section;            /* _PyRuntime found through its section: no symbols */
    int name_major, name_minor;
    char data_version[32];
} found;

/* Where _PyRuntime is: its symbol, or, where strip took the symbols,
 * the ".PyRuntime" section CPython places it in, when the section starts
 * with the _Py_DebugOffsets cookie (3.13+: the layout, and what the type
 * objects are learnt with, are read from there; before, a build without
 * symbols cannot be recorded and is told so). */
static int runtime_addr(const pyelf *e, uint64_t *v, int *by_section)
{
    uint64_t size;
    const uint8_t *bytes;

    *by_section = 0;
    if (pyelf_symbol(e, "_PyRuntime", v) == 0)
        return 0;
    *by_section = 1;
    return pyelf_section(e, ".PyRuntime", v, &size, &bytes) == 0 && size >= PY_DEBUG_READ &&
                   bytes && memcmp(bytes, PY_DEBUG_COOKIE, 8) == 0
               ? 0
               : -1;
}

/* Symbols of the file holding _PyRuntime. */
static void resolve_types(py_proc *p, const pyelf *e, uint64_t bias)
{
    uint64_t v;

    if (pyelf_symbol(e, "PyCode_Type", &v) == 0)
        p->code_type = bias + v;
    if (pyelf_symbol(e, "PyUnicode_Type", &v) == 0)
        p->unicode_type = bias + v;
    if (pyelf_symbol(e, "PyBytes_Type", &v) == 0)
        p->bytes_type = bias + v;
    if (pyelf_symbol(e, "PyFrame_Type", &v) == 0)
        p->frame_type = bias + v;
    /* only for thread names: their absence just disables those */
    if (pyelf_symbol(e, "PyDict_Type", &v) == 0)
        p->dict_type = bias + v;
    if (pyelf_symbol(e, "PyModule_Type", &v) == 0)
        p->module_type = bias + v;
    if (pyelf_symbol(e, "PyLong_Type", &v) == 0)
        p->long_type = bias + v;
    /* only for local variables (py_values.c): without one, its values
     * show as "<TypeName at 0x…>" */
    if (pyelf_symbol(e, "_PyNone_Type", &v) == 0)
        p->none_type = bias + v;
    if (pyelf_symbol(e, "PyBool_Type", &v) == 0)
        p->bool_type = bias + v;
    if (pyelf_symbol(e, "PyFloat_Type", &v) == 0)
        p->float_type = bias + v;
    if (pyelf_symbol(e, "PyTuple_Type", &v) == 0)
        p->tuple_type = bias + v;
    if (pyelf_symbol(e, "PyList_Type", &v) == 0)
        p->list_type = bias + v;
    if (pyelf_symbol(e, "PyCell_Type", &v) == 0)
        p->cell_type = bias + v;
}

/* Is pid on its way out: a zombie, or past the point where it let go of
 * its memory (PF_EXITING in the flags of /proc/PID/stat)?  Its maps and
 * executable are gone then, which says nothing about what it ran. */
static int exiting(pid_t pid)
{
    char fn[64], buf[1024];
    snprintf(fn, sizeof fn, "/proc/%d/stat", (int)pid);
    FILE *fp = fopen(fn, "re");
    if (!fp)
        return 1;
    size_t n = fread(buf, 1, sizeof buf - 1, fp);
    fclose(fp);
    buf[n] = '\0';
    const char *q = strrchr(buf, ')');
    char state;
    unsigned long flags;
    /* after the name: state, ppid, pgrp, session, tty, tpgid, flags */
    if (!q || sscanf(q + 1, " %c %*d %*d %*d %*d %*d %lu", &state, &flags) != 2)
        return 0;
    return state == 'Z' || state == 'X' || (flags & 0x4) != 0;   /* PF_EXITING */
}

static py_status locate(py_proc *p, found *f, char *err, size_t errlen)
{
    pymaps maps = { 0 };
    char exe[PATH_MAX] = "", fn[64];
    py_status st = PY_ERR_NOT_PYTHON;
    int old_major = 0, old_minor = -1, needs_lib = 0, saw_lib = 0, bare_exe = 0;
    char bare_version[32] = "";

    if (pymaps_read(p->self ? 0 : p->pid, &maps) != 0) {
        int e = errno;
        if (e == ENOENT || e == ESRCH) {
            snprintf(err, errlen, "no process with pid %d", (int)p->pid);
            return PY_ERR_GONE;
        }
        if (e == EACCES || e == EPERM)
            return perm_error(p->pid, err, errlen);
        snprintf(err, errlen, "pid %d: cannot read /proc/%d/maps: %s", (int)p->pid, (int)p->pid,
                 strerror(e));
        return py_status_from_errno(e);
    }
    snprintf(fn, sizeof fn, "/proc/%d/exe", (int)p->pid);
    ssize_t n = readlink(fn, exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = '\0';
    if (n > 10 && strcmp(exe + n - 10, " (deleted)") == 0)
        exe[n - 10] = '\0';

    /* Candidates: libpython mappings first, then the executable. */
    for (int pass = 0; pass < 2 && !f->runtime; pass++) {
        for (size_t i = 0; i < maps.n && !f->runtime; i++) {
            const pymap *m = &maps.m[i];
            const char *b = base_name(m->path);
            if (m->offset != 0)
                continue;
            if (pass == 0 ? strncmp(b, "libpython", 9) != 0 : strcmp(m->path, exe) != 0)
                continue;
            if (pymaps_base(&maps, m->path) != m)
                continue;
            saw_lib |= pass == 0;
            pyelf e;
            if (open_elf(p->pid, m, m->path, &e) != 0)
                continue;
            uint64_t v;
            int major = 0, minor = name_minor(m->path, &major);
            /* An executable linked against a libpython the loader has not
             * mapped yet (pyenv, --enable-shared) holds no runtime of its
             * own, yet its name ("python3.12") would pass for an old
             * Python below: it is a Python that is not ready. */
            if (pass == 1 && !saw_lib && pyelf_needs(&e, "libpython")) {
                needs_lib = 1;
                pyelf_close(&e);
                continue;
            }
            int by_section;
            if (runtime_addr(&e, &v, &by_section) == 0) {
                f->by_section = by_section;
                snprintf(f->path, sizeof f->path, "%s", m->path);
                f->bias = m->start - e.load_vaddr;
                f->runtime = f->bias + v;
                f->name_major = major;
                f->name_minor = minor;
                if (pyelf_symbol(&e, "Py_Version", &v) == 0) {
                    f->has_py_version = 1;
                    f->py_version = f->bias + v;
                } else {
                    pyelf_version_string(&e, major == 3 ? minor : -1, f->data_version,
                                         sizeof f->data_version);
                }
                resolve_types(p, &e, f->bias);
            } else if (minor >= 0 || pyelf_symbol(&e, "Py_Initialize", &v) == 0) {
                /* A Python without _PyRuntime: 2.x or 3.6 and older. */
                old_major = major ? major : 3;
                old_minor = minor;
            } else if (pass == 1 && !pyelf_has_symbols(&e)) {
                /* Nothing to look in at all: stripped and statically
                 * linked.  Say so, and whether it looks like a Python. */
                bare_exe = 1;
                pyelf_version_string(&e, -1, bare_version, sizeof bare_version);
            }
            pyelf_close(&e);
        }
    }
    if (f->runtime) {
        st = PY_OK;
        /* The loader maps a library's whole extent read-only first and its
         * writable data segment over it a moment later: until then what
         * lies at _PyRuntime (and Py_Version) is other bytes of the file,
         * which would pass for a broken or unsupported Python. */
        for (size_t i = 0; i < maps.n; i++) {
            const pymap *m = &maps.m[i];
            if (f->runtime >= m->start && f->runtime < m->end && m->perms[1] != 'w') {
                snprintf(err, errlen, "pid %d: %s is still being loaded: retry", (int)p->pid,
                         f->path);
                st = PY_ERR_NOT_READY;
                break;
            }
        }
    } else if (needs_lib) {
        snprintf(err, errlen, "pid %d (%s) has not loaded libpython yet: retry", (int)p->pid,
                 exe[0] ? exe : "?");
        st = PY_ERR_NOT_READY;
    } else if (old_major) {
        if (old_minor >= 0)
            snprintf(err, errlen, "pid %d runs Python %d.%d, which trc does not support "
                     "(CPython 3.8 or later is needed)", (int)p->pid, old_major, old_minor);
        else
            snprintf(err, errlen, "pid %d runs a Python without a _PyRuntime symbol (2.x or 3.6 "
                     "and older?), which trc does not support (CPython 3.8 or later is needed)",
                     (int)p->pid);
        st = PY_ERR_VERSION;
    } else if (bare_exe && bare_version[0]) {
        snprintf(err, errlen, "pid %d (%s) looks like CPython %s but its executable has no symbol "
                 "table (stripped and statically linked): trc finds the interpreter through its "
                 "_PyRuntime symbol, so it cannot record this build; use an interpreter that keeps "
                 "its symbols (any dynamically linked one does, stripped or not)",
                 (int)p->pid, exe[0] ? exe : "?", bare_version);
    } else if (bare_exe) {
        snprintf(err, errlen, "pid %d (%s) is not a CPython process: its executable has no symbol "
                 "table (stripped and statically linked) and no libpython is mapped", (int)p->pid,
                 exe[0] ? exe : "?");
    } else if (!exe[0] && !p->self && exiting(p->pid)) {
        snprintf(err, errlen, "pid %d was exiting", (int)p->pid);
        st = PY_ERR_GONE;
    } else {
        snprintf(err, errlen, "pid %d (%s) is not a CPython process: no _PyRuntime symbol (nor "
                 ".PyRuntime section) in its executable or in a mapped libpython", (int)p->pid, exe[0] ? exe : "unknown executable");
    }
    pymaps_free(&maps);
    return st;
}

static uint32_t max_off(const uint32_t *o, int n)
{
    uint32_t m = 0;
    for (int i = 0; i < n; i++)
        if (o[i] != PY_OFF_NONE && o[i] > m)
            m = o[i];
    return m;
}

static uint32_t min_off(const uint32_t *o, int n)
{
    uint32_t m = UINT32_MAX;
    for (int i = 0; i < n; i++)
        if (o[i] != PY_OFF_NONE && o[i] < m)
            m = o[i];
    return m == UINT32_MAX ? 0 : m;
}

static void compute_spans(py_proc *p)
{
    const py_layout *L = &p->L;
    uint32_t rt[] = { L->rt_interp_head, L->rt_tstate_current };
    uint32_t is[] = { L->is_next, L->is_tstate_head };
    uint32_t ts[] = { L->ts_prev, L->ts_next, L->ts_interp, L->ts_frame, L->ts_cframe, L->ts_current_frame,
                      L->ts_thread_id, L->ts_id, L->ts_native_thread_id, L->ts_datastack_chunk,
                      L->ts_datastack_top, L->ts_base_frame };
    uint32_t fo[] = { L->ob_type, L->fo_back, L->fo_code, L->fo_lasti, L->fo_state };
    uint32_t co[] = { L->ob_type, L->ob_size, L->co_firstlineno, L->co_filename, L->co_name,
                      L->co_qualname, L->co_lines, L->co_version,
                      L->tlbc ? L->co_tlbc : PY_OFF_NONE };
    uint32_t gil[] = { L->gil_locked, L->gil_last_holder,
                       L->free_threaded ? L->gil_enabled : PY_OFF_NONE };

    p->rt_lo = min_off(rt, 2);
    p->rt_len = max_off(rt, 2) + 8 - p->rt_lo;
    p->is_lo = min_off(is, 2);
    p->is_len = max_off(is, 2) + 8 - p->is_lo;
    p->ts_len = max_off(ts, 12) + 8;
    p->fr_len = L->frame_objects ? max_off(fo, 5) + 8 : L->if_size;
    p->co_len = max_off(co, 9) + 8;
    p->gil_lo = min_off(gil, 3);
    p->gil_len = max_off(gil, 3) + 8 - p->gil_lo;
}

/* From the interpreter at *interp, whose span is already read into is:
 * the first interpreter in the list that has a thread state (into
 * *interp and is), and that state in *ts0 (0: none has).  The newest
 * interpreter comes first, and a subinterpreter with no thread running
 * in it has none.  0, or -1 when a read failed. */
static int first_thread(py_proc *p, uint64_t *interp, uint8_t *is, uint64_t *ts0)
{
    const py_layout *L = &p->L;

    *ts0 = pysnap_u64(is, L->is_tstate_head - p->is_lo);
    for (int ni = 1; *ts0 == 0 && ni < PY_INTERPS_MAX; ni++) {
        uint64_t next = pysnap_u64(is, L->is_next - p->is_lo);
        if (next == 0)
            break;
        if (pymem_read(&p->mem, next + p->is_lo, is, p->is_len) != 0)
            return -1;
        *interp = next;
        *ts0 = pysnap_u64(is, L->is_tstate_head - p->is_lo);
    }
    return 0;
}

static py_status choose_layout(py_proc *p, const found *f, char *err, size_t errlen)
{
    int minor = -1;
    uint64_t hex = 0;

    if (f->has_py_version) {
        uint8_t b[8];
        if (pymem_read(&p->mem, f->py_version, b, sizeof b) != 0)
            return read_error(p, errno, err, errlen);
        hex = pysnap_u64(b, 0) & 0xffffffffu;
        py_version_format(hex, p->version, sizeof p->version);
        if ((hex >> 24) != 3) {
            snprintf(err, errlen, "pid %d: %s has an implausible Py_Version 0x%llx", (int)p->pid,
                     f->path, (unsigned long long)hex);
            return PY_ERR_VERSION;
        }
        minor = (int)(hex >> 16) & 0xff;
    } else if (f->data_version[0]) {
        snprintf(p->version, sizeof p->version, "%s", f->data_version);
        minor = atoi(f->data_version + 2);
    } else if (f->name_major == 3 && f->name_minor >= 0) {
        snprintf(p->version, sizeof p->version, "3.%d", f->name_minor);
        minor = f->name_minor;
    } else {
        snprintf(err, errlen, "pid %d: cannot tell the CPython version of %s (no Py_Version "
                 "symbol, no version in its name or data)", (int)p->pid, f->path);
        return PY_ERR_VERSION;
    }
    if (minor < 8) {
        snprintf(err, errlen, "pid %d runs CPython %s, which trc does not support (3.8 or later "
                 "is needed)", (int)p->pid, p->version);
        return PY_ERR_VERSION;
    }
    if (minor <= 12) {
        const py_layout *t = py_layout_for_minor((unsigned)minor);
        if (!t) {
            snprintf(err, errlen, "no layout for CPython %s", p->version);
            return PY_ERR_VERSION;
        }
        p->L = *t;
        return PY_OK;
    }
    uint8_t blk[PY_DEBUG_READ];
    char why[200];
    /* the cookie and version first: they say how long the block is */
    if (pymem_read(&p->mem, f->runtime, blk, 16) != 0)
        return read_error(p, errno, err, errlen);
    uint64_t dhex = py_debugoff_version(blk, 16);
    if (dhex == 0 || (hex && (dhex >> 16) != (hex >> 16))) {
        snprintf(err, errlen, "pid %d: CPython %s but _PyRuntime does not start with matching "
                 "_Py_DebugOffsets (cookie %s)", (int)p->pid, p->version, dhex ? "ok" : "missing");
        return PY_ERR_VERSION;
    }
    size_t len = py_debugoff_size(dhex, why, sizeof why);
    if (len == 0 || len > sizeof blk) {
        snprintf(err, errlen, "pid %d: %s", (int)p->pid, why);
        return PY_ERR_VERSION;
    }
    if (pymem_read(&p->mem, f->runtime, blk, len) != 0)
        return read_error(p, errno, err, errlen);
    if (py_layout_from_debug(blk, len, &p->L, why, sizeof why) != 0) {
        snprintf(err, errlen, "pid %d: %s", (int)p->pid, why);
        return PY_ERR_VERSION;
    }
    return PY_OK;
}

/* Whether the runtime records a finalizing thread: Py_FinalizeEx sets it
 * once the atexit handlers have run and never clears it, so a runtime
 * without an interpreter or threads is one shutting down rather than one
 * not started yet (both read as empty lists). */
static int finalizing(py_proc *p)
{
    uint64_t who = 0;
    if (p->L.rt_finalizing == PY_OFF_NONE ||
        pymem_read(&p->mem, p->runtime + p->L.rt_finalizing, &who, sizeof who) != 0)
        return 0;
    return who != 0;
}

static py_status shutting_down(py_proc *p, char *err, size_t errlen)
{
    snprintf(err, errlen, "pid %d: the CPython %s interpreter is shutting down (finalizing): "
             "no Python code runs any more", (int)p->pid, p->version);
    return PY_ERR_GONE;
}

/* Reads runtime -> first interpreter -> first thread state and checks
 * the thread state points back (the layout fits this build). */
static py_status check_live(py_proc *p, char *err, size_t errlen)
{
    const py_layout *L = &p->L;
    uint8_t rt[2048], is[1024], ts[1024];
    int tries = 0;

    if (p->rt_len > sizeof rt || p->is_len > sizeof is || p->ts_len > PY_TS_MAX ||
        p->fr_len > 1024 || p->co_len > 1024) {
        snprintf(err, errlen, "CPython %s: layout spans too large", p->version);
        return PY_ERR_VERSION;
    }
    for (;;) {
        if (pymem_read(&p->mem, p->runtime + p->rt_lo, rt, p->rt_len) != 0)
            return read_error(p, errno, err, errlen);
        uint64_t interp = pysnap_u64(rt, L->rt_interp_head - p->rt_lo);
        if (interp == 0) {
            if (finalizing(p))
                return shutting_down(p, err, errlen);
            snprintf(err, errlen, "pid %d: the CPython %s runtime is not initialised yet (no "
                     "interpreter): retry", (int)p->pid, p->version);
            return PY_ERR_NOT_READY;
        }
        if (pymem_read(&p->mem, interp + p->is_lo, is, p->is_len) != 0)
            goto mismatch;
        uint64_t ts0;
        if (first_thread(p, &interp, is, &ts0) != 0)
            goto mismatch;
        if (ts0 == 0) {
            if (finalizing(p))
                return shutting_down(p, err, errlen);
            snprintf(err, errlen, "pid %d: the CPython %s interpreter has no thread yet: retry",
                     (int)p->pid, p->version);
            return PY_ERR_NOT_READY;
        }
        if (pymem_read(&p->mem, ts0, ts, p->ts_len) == 0 && pysnap_u64(ts, L->ts_interp) == interp)
            return PY_OK;
    mismatch:
        if (++tries >= ATTACH_TRIES)
            break;
        usleep(2000);
    }
    snprintf(err, errlen, "pid %d: the CPython %s layout (from %s) does not fit this interpreter "
             "build: its thread state does not point back to its interpreter", (int)p->pid,
             p->version, L->headers);
    return PY_ERR_VERSION;
}

/* The C string at addr is name (reads at most 16 bytes). */
static int c_string_is(py_proc *p, uint64_t addr, const char *name)
{
    char b[16];
    size_t n = strlen(name) + 1;
    return addr && n <= sizeof b && pymem_read(&p->mem, addr, b, n) == 0 && memcmp(b, name, n) == 0;
}

/* The object at obj has a type whose tp_name is name: that type, or 0. */
static uint64_t type_named(py_proc *p, uint64_t obj, const char *name)
{
    uint8_t b[8];
    if (!obj || (obj & 7) || pymem_read(&p->mem, obj + p->L.ob_type, b, 8) != 0)
        return 0;
    uint64_t type = pysnap_u64(b, 0);
    if (!type || (type & 7) || pymem_read(&p->mem, type + p->L.tp_name, b, 8) != 0)
        return 0;
    return c_string_is(p, pysnap_u64(b, 0), name) ? type : 0;
}

/* A static and stripped interpreter (3.13+, its _PyRuntime found through
 * its section) has no symbols for the type objects that what is read is
 * checked against.  They are learnt from the interpreter itself: a
 * Python frame of a thread names a code object, whose type must be
 * called "code", its co_filename's "str" and its co_linetable's "bytes"
 * (tp_name's place from _Py_DebugOffsets).  PY_OK, or NOT_READY while
 * no thread runs Python (retry). */
static py_status learn_types(py_proc *p, const char *path, char *err, size_t errlen)
{
    const py_layout *L = &p->L;
    uint8_t b[8], fr[1024];
    uint64_t interp = 0;

    if (p->fr_len > sizeof fr || pymem_read(&p->mem, p->runtime + L->rt_interp_head, b, 8) != 0)
        return read_error(p, errno, err, errlen);
    interp = pysnap_u64(b, 0);
    for (int ni = 0; interp && ni < PY_INTERPS_MAX; ni++) {
        uint64_t ts = 0, next = 0;
        if (pymem_read(&p->mem, interp + L->is_tstate_head, b, 8) == 0)
            ts = pysnap_u64(b, 0);
        for (int nt = 0; ts && nt < 1000; nt++) {
            uint64_t frame = 0;
            if (pymem_read(&p->mem, ts + L->ts_current_frame, b, 8) == 0)
                frame = pysnap_u64(b, 0);
            for (int nf = 0; frame && !(frame & 7) && nf < 64; nf++) {
                if (pymem_read(&p->mem, frame, fr, p->fr_len) != 0)
                    break;
                uint64_t code = pysnap_u64(fr, L->if_code) & L->code_ptr_mask;
                if (fr[L->if_owner] < L->owner_skip_min && code) {
                    uint8_t c[1024];
                    uint64_t ct = type_named(p, code, "code");
                    if (ct && p->co_len <= sizeof c && pymem_read(&p->mem, code, c, p->co_len) == 0) {
                        uint64_t ut = type_named(p, pysnap_u64(c, L->co_filename), "str");
                        uint64_t bt = type_named(p, pysnap_u64(c, L->co_lines), "bytes");
                        if (ut && bt) {
                            p->code_type = ct;
                            p->unicode_type = ut;
                            p->bytes_type = bt;
                            return PY_OK;
                        }
                    }
                }
                frame = pysnap_u64(fr, L->if_previous);
            }
            if (pymem_read(&p->mem, ts + L->ts_next, b, 8) != 0)
                break;
            ts = pysnap_u64(b, 0);
        }
        if (pymem_read(&p->mem, interp + L->is_next, b, 8) == 0)
            next = pysnap_u64(b, 0);
        interp = next;
    }
    snprintf(err, errlen, "pid %d: %s has no symbols, and none of its threads runs Python code "
             "yet to learn its type objects from: retry", (int)p->pid, path);
    return PY_ERR_NOT_READY;
}

/* Whether the main interpreter (the last in the list) of a
 * free-threaded build runs with its GIL: 1 enabled (PYTHON_GIL=1, or an
 * extension that needs one), 0 disabled, -1 not read.  Read once at
 * attach; the thread list's reads with want_gil follow it later. */
static int ft_gil_enabled(py_proc *p)
{
    const py_layout *L = &p->L;
    uint64_t interp, next, gil;
    uint32_t enabled;

    if (!L->free_threaded || L->gil_enabled == PY_OFF_NONE || L->is_ceval_gil == PY_OFF_NONE ||
        pymem_read(&p->mem, p->runtime + L->rt_interp_head, &interp, 8) != 0)
        return -1;
    for (int ni = 0; interp; ni++) {
        if (ni >= PY_INTERPS_MAX || (interp & 7) ||
            pymem_read(&p->mem, interp + L->is_next, &next, 8) != 0)
            return -1;
        if (!next)
            break;
        interp = next;
    }
    if (!interp || pymem_read(&p->mem, interp + L->is_ceval_gil, &gil, 8) != 0 || !gil ||
        (gil & 7) || pymem_read(&p->mem, gil + L->gil_enabled, &enabled, 4) != 0)
        return -1;
    return enabled != 0;
}

void py_layout_words(py_proc *p, int ft_gil)
{
    const char *h = p->L.headers;
    size_t n = strlen(h);

    p->ft_gil = p->ft_gil_now = ft_gil;
    p->layout_changes++;
    if (strncmp(h, "_Py_", 4) != 0) {
        snprintf(p->layout_source, sizeof p->layout_source, "the %s headers", h);
        return;
    }
    if (!p->L.free_threaded || n == 0 || h[n - 1] != ')') {
        snprintf(p->layout_source, sizeof p->layout_source, "%s", h);
        return;
    }
    snprintf(p->layout_source, sizeof p->layout_source, "%.*s, free-threaded%s)", (int)(n - 1), h,
             ft_gil > 0 ? ", GIL enabled" : ft_gil == 0 ? ", no GIL" : "");
}

/* img: a process image in our own memory instead of an interpreter
 * found by its ELF symbols (py_proc_attach_image); else NULL. */
static py_status attach(pid_t pid, int self, const py_image *img, py_proc **out, char *err,
                        size_t errlen)
{
    py_proc *p = NULL;
    found f;
    py_status st;
    char dummy[8];

    if (!err || errlen == 0) {
        err = dummy;
        errlen = sizeof dummy;
    }
    err[0] = '\0';
    *out = NULL;
    if (pid <= 0) {
        snprintf(err, errlen, "invalid pid %d", (int)pid);
        return PY_ERR_GONE;
    }
    p = trc_calloc(1, sizeof *p);
    if (!p) {
        snprintf(err, errlen, "out of memory");
        return PY_ERR_NOMEM;
    }
    pthread_mutex_init(&p->lock, NULL);
    static uint64_t next_id;   /* only to tell handles apart */
    p->id = __atomic_add_fetch(&next_id, 1, __ATOMIC_RELAXED);
    p->pid = pid;
    p->self = self;
    p->tid_off = -1;
    if (self) {
        if (pymem_init_local(&p->mem) != 0) {
            st = py_status_from_errno(errno);
            snprintf(err, errlen, "cannot read /proc/self/maps: %s", strerror(errno));
            goto fail;
        }
        /* By system call unless reading the calling thread's own stack
         * (py_proc_stack_self_thread): see py_mem.c. */
        p->mem.careful = 1;
    } else {
        pymem_init_remote(&p->mem, pid);
    }
    pysnap_init(&p->snap, &p->mem);
    memset(&f, 0, sizeof f);
    if (img) {
        p->runtime = img->runtime;
        p->L = *img->L;
        p->code_type = img->code_type;
        p->unicode_type = img->unicode_type;
        p->bytes_type = img->bytes_type;
        p->dict_type = img->dict_type;
        p->module_type = img->module_type;
        p->long_type = img->long_type;
        snprintf(p->version, sizeof p->version, "3.%u (image)", (unsigned)p->L.minor);
        snprintf(f.path, sizeof f.path, "the image");
    } else {
        if ((st = locate(p, &f, err, errlen)) != PY_OK)
            goto fail;
        p->runtime = f.runtime;
        if ((st = choose_layout(p, &f, err, errlen)) != PY_OK)
            goto fail;
        if (f.by_section && (!p->code_type || !p->unicode_type || !p->bytes_type) &&
            p->L.tp_name) {
            compute_spans(p);
            if ((st = learn_types(p, f.path, err, errlen)) != PY_OK)
                goto fail;
        }
    }
    if (!p->code_type || !p->unicode_type || !p->bytes_type ||
        (p->L.frame_objects && !p->frame_type)) {
        snprintf(err, errlen, "pid %d: %s lacks the PyCode_Type/PyUnicode_Type/PyBytes_Type "
                 "symbols needed to validate what is read", (int)pid, f.path);
        st = PY_ERR_VERSION;
        goto fail;
    }
    compute_spans(p);
    if ((st = check_live(p, err, errlen)) != PY_OK)
        goto fail;
    py_layout_words(p, ft_gil_enabled(p));
    if (p->L.ts_native_thread_id == PY_OFF_NONE)
        pytid_calibrate(p);
    *out = p;
    return PY_OK;
fail:
    py_proc_free(p);
    return st;
}

py_status py_proc_attach(pid_t pid, py_proc **out, char *err, size_t errlen)
{
    return attach(pid, 0, NULL, out, err, errlen);
}

py_status py_proc_attach_self(py_proc **out, char *err, size_t errlen)
{
    return attach(getpid(), 1, NULL, out, err, errlen);
}

py_status py_proc_attach_image(const py_image *img, py_proc **out, char *err, size_t errlen)
{
    return attach(getpid(), 1, img, out, err, errlen);
}

void py_proc_free(py_proc *p)
{
    if (!p)
        return;
    pynames_free(p);
    pycode_cache_free(&p->cc);
    trca_free_all(&p->arena);
    for (size_t i = 0; i < p->memocount; i++)
        trc_free(p->memo[i].rs);
    trc_free(p->memo);
    trch_index_cleanup(&p->memo_index);
    trc_free(p->tlbc);
    pysnap_cleanup(&p->snap);
    pymem_cleanup(&p->mem);
    pthread_mutex_destroy(&p->lock);
    trc_free(p);
}

const char *py_proc_version(const py_proc *p)
{
    return p->version;
}

const char *py_proc_layout_source(const py_proc *p)
{
    return p->layout_source;
}

int py_proc_no_gil(const py_proc *p)
{
    return p->L.free_threaded && p->ft_gil_now == 0;
}

unsigned py_proc_layout_changes(const py_proc *p)
{
    return p->layout_changes;
}

pid_t py_proc_pid(const py_proc *p)
{
    return p->pid;
}

void py_proc_get_stats(const py_proc *p, py_proc_stats *out)
{
    *out = p->stats;
    out->reads = p->mem.reads;
    out->read_bytes = p->mem.bytes;
    out->read_pages = p->mem.pages;
}

uint64_t py_proc_runtime(const py_proc *p)
{
    return p->runtime;
}

py_status py_proc_last_error(const py_proc *p)
{
    return p->last;
}
