/*
 * py_objlayout.c — the generated object-model tables (py_objlayout.h),
 * selected by minor version and build, and 3.14/3.15's from their
 * _Py_DebugOffsets.
 */
#include "lib/py/py_objlayout.h"

#include "lib/py/py_debugoff.h"

#include <stddef.h>

#include "lib/py/generated/objects_3_8.h"
#include "lib/py/generated/objects_3_9.h"
#include "lib/py/generated/objects_3_10.h"
#include "lib/py/generated/objects_3_11.h"
#include "lib/py/generated/objects_3_12.h"
#include "lib/py/generated/objects_3_13.h"
#include "lib/py/generated/objects_3_13t.h"

const py_objlayout *py_objlayout_for_minor(unsigned minor)
{
    static const py_objlayout *const tables[] = {
        &py_objlayout_3_8,  &py_objlayout_3_9,  &py_objlayout_3_10,
        &py_objlayout_3_11, &py_objlayout_3_12, &py_objlayout_3_13,
    };

    if (minor < 8 || minor - 8 >= sizeof tables / sizeof tables[0])
        return NULL;
    return tables[minor - 8];
}

const py_objlayout *py_objlayout_313t(void)
{
    return &py_objlayout_3_13t;
}

/* Pointers between the end of PyHeapTypeObject's ht_type (a
 * PyTypeObject) and its ht_cached_keys: PyAsyncMethods (4),
 * PyNumberMethods (36), PyMappingMethods (3), PySequenceMethods (10),
 * PyBufferProcs (2), then ht_name, ht_slots and ht_qualname (3).  The
 * same in 3.13 (880 - 416, generated table and debug block), 3.13t
 * (896 - 432, generated table), 3.15 (888 - 424, both published) and
 * 3.15t (904 - 440) as in the 3.14 headers. */
#define HT_CACHED_KEYS_AFTER_TYPE (58 * 8)

static int field(const uint8_t *blk, size_t len, const char *name, uint64_t max, uint32_t *out)
{
    uint64_t v;

    if (py_debugoff_field(blk, len, name, &v) != 0 || v > max)
        return -1;
    *out = (uint32_t)v;
    return 0;
}

/* What is taken from 3.13 unchanged, compared in CPython's 3.14 and 3.15
 * headers (docs/design/cpython.md §10): the object header, {ob_refcnt,
 * ob_type} (16 bytes) in a GIL build and {ob_tid, ob_flags, ob_mutex,
 * ob_gc_bits, ob_ref_local, ob_ref_shared, ob_type} (32 bytes) in a
 * free-threaded one, and so ma_used right after it; the managed dict
 * three words before the object (MANAGED_DICT_OFFSET; one word in a
 * free-threaded build, which has no PyGC_Head before its objects) and
 * a plain class's inline values right after its header; PyDictValues
 * {capacity, size, embedded, valid, values[]}; PyDictKeysObject
 * {dk_refcnt, dk_log2_size, dk_log2_index_bytes, dk_kind, dk_version,
 * dk_usable, dk_nentries, dk_indices[]} (a free-threaded build's
 * one-byte dk_mutex sits in dk_version's padding) and both entry
 * kinds; the DICT_KEYS_GENERAL, Py_TPFLAGS_HEAPTYPE, _MANAGED_DICT and
 * _INLINE_VALUES values; PyTypeObject from its start to tp_dictoffset
 * (3.14 publishes tp_flags, which must still be where 3.13 or 3.13t
 * has it); 30-bit digits of 4 bytes, lv_tag's size above its 3 low
 * bits.  The debug block gives the rest. */
int py_objlayout_from_debug(const uint8_t *blk, size_t len, py_objlayout *out)
{
    unsigned minor = (unsigned)(py_debugoff_version(blk, len) >> 16) & 0xff;
    uint32_t ft, ob_size, ob_type, ty_size, tp_flags, di_size, lo_size;
    py_objlayout o;

    if ((minor != 14 && minor != 15) || field(blk, len, "free_threaded", 1, &ft) != 0)
        return -1;
    const py_objlayout *base = ft ? py_objlayout_313t() : py_objlayout_for_minor(13);
    o = *base;
    o.minor = minor;
    o.headers = minor == 14 ? (ft ? "_Py_DebugOffsets (3.14) and the 3.13t object model"
                                  : "_Py_DebugOffsets (3.14) and the 3.13 object model")
                            : (ft ? "_Py_DebugOffsets (3.15) and the 3.13t object model"
                                  : "_Py_DebugOffsets (3.15) and the 3.13 object model");
    /* sizeof(PyObject) (ob.size) is where PyVarObject's ob_size sits */
    if (field(blk, len, "ob.size", 64, &ob_size) != 0 || ob_size != base->ob_size ||
        field(blk, len, "ob.ob_type", 64, &ob_type) != 0 || ob_type != base->ob_type ||
        field(blk, len, "is.imports_modules", 1u << 20, &o.is_modules) != 0 ||
        field(blk, len, "ty.size", 4096, &ty_size) != 0 ||
        field(blk, len, "ty.tp_flags", 4096, &tp_flags) != 0 || tp_flags != base->tp_flags ||
        field(blk, len, "di.size", 256, &di_size) != 0 ||
        field(blk, len, "di.ma_keys", 256, &o.di_keys) != 0 ||
        field(blk, len, "di.ma_values", 256, &o.di_values) != 0 ||
        field(blk, len, "lo.size", 256, &lo_size) != 0 ||
        field(blk, len, "lo.lv_tag", 256, &o.lo_tag) != 0 ||
        field(blk, len, "lo.ob_digit", 256, &o.lo_digits) != 0)
        return -1;
    o.di_used = ob_size;
    o.ht_size = PY_OFF_NONE;   /* not used; 3.14 added ht_token after ht_cached_keys */
    o.ht_cached_keys = ty_size + HT_CACHED_KEYS_AFTER_TYPE;
    if (minor >= 15 &&
        (field(blk, len, "ty.tp_basicsize", 4096, &o.tp_basicsize) != 0 ||
         field(blk, len, "ty.tp_dictoffset", 4096, &o.tp_dictoffset) != 0 ||
         field(blk, len, "ht.size", 8192, &o.ht_size) != 0 ||
         field(blk, len, "ht.ht_cached_keys", 8192, &o.ht_cached_keys) != 0))
        return -1;
    if (o.tp_basicsize + 8 > ty_size || o.tp_dictoffset + 8 > ty_size ||
        o.tp_flags + 8 > ty_size || o.ht_cached_keys < ty_size ||
        o.di_keys < o.di_used + 8 || o.di_values + 8 > di_size || o.di_keys + 8 > di_size ||
        o.lo_tag < ob_size || o.lo_digits < o.lo_tag + 8 || o.lo_digits + 4 > lo_size)
        return -1;
    *out = o;
    return 0;
}
