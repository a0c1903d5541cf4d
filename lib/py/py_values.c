/*
 * py_values.c — one object of the target as text, by its exact type
 * (lib/py/py_values.h): the local variables `trec --dump --locals`
 * shows.
 *
 * A type is recognised by the address of its type object (found in the
 * interpreter's symbols at attach), never by its name: a class called
 * "int" is shown as any other object.  Each object is read with its own
 * checks (a size that fits, a string kind that exists, a length no
 * larger than memory could hold) because the target runs on while it is
 * read and a local may be freed under us: a value that does not hold
 * together reads as "<unreadable at 0x…>", never as something it was
 * not.  Bounded work per value: ints past PYVAL_INT_DIGITS digits are
 * shown by size, strings and bytes are cut at PYVAL_MAX_CHARS.
 */
#include "lib/py/py_values.h"

#include "lib/py/py_snap.h"
#include "lib/py/py_text.h"
#include "lib/util/alloc.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/py/generated/values_3_8.h"
#include "lib/py/generated/values_3_9.h"
#include "lib/py/generated/values_3_10.h"
#include "lib/py/generated/values_3_11.h"
#include "lib/py/generated/values_3_12.h"
#include "lib/py/generated/values_3_13.h"
#include "lib/py/generated/values_3_13t.h"

/* A str or bytes longer than this is taken for memory being reused: no
 * object this large is a local worth reading at all (2^40 bytes). */
#define PYVAL_LEN_MAX (INT64_C(1) << 40)

const py_vallayout *py_vallayout_for_minor(unsigned minor)
{
    static const py_vallayout *const tables[] = {
        &py_vallayout_3_8,  &py_vallayout_3_9,  &py_vallayout_3_10,
        &py_vallayout_3_11, &py_vallayout_3_12, &py_vallayout_3_13,
    };

    if (minor < 8 || minor - 8 >= sizeof tables / sizeof tables[0])
        return NULL;
    return tables[minor - 8];
}

const py_vallayout *py_vallayout_313t(void)
{
    return &py_vallayout_3_13t;
}

/* Text appended to a buffer that never overflows (cut, NUL-terminated). */
typedef struct outbuf {
    char *s;
    size_t cap, n;
} outbuf;

static void put(outbuf *o, const char *fmt, ...)
{
    if (o->n + 1 >= o->cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(o->s + o->n, o->cap - o->n, fmt, ap);
    va_end(ap);
    if (w > 0)
        o->n = o->n + (size_t)w < o->cap ? o->n + (size_t)w : o->cap - 1;
}

/* Code point cp as UTF-8, whole or not at all. */
static void put_utf8(outbuf *o, uint32_t cp)
{
    size_t n = o->n + 1 < o->cap ? py_utf8_put(o->s + o->n, o->cap - 1 - o->n, cp) : 0;
    o->n += n;
    o->s[o->n] = '\0';
}

static int rd(const pyval_ctx *c, uint64_t addr, void *buf, size_t len)
{
    return addr == 0 ? -1 : pymem_read(c->mem, addr, buf, len);
}

static int rd64(const pyval_ctx *c, uint64_t addr, uint64_t *v)
{
    uint8_t b[8];
    if (rd(c, addr, b, 8) != 0)
        return -1;
    *v = pysnap_u64(b, 0);
    return 0;
}

/* The escape of a character Python's repr would not show as itself:
 * control characters, DEL to NBSP, the soft hyphen, line and paragraph
 * separators, surrogates (the rest of Unicode shows as itself, which is
 * what matters here: a name or a message stays readable). */
static int escaped(uint32_t cp, char quote, outbuf *o)
{
    switch (cp) {
    case '\\': put(o, "\\\\"); return 1;
    case '\n': put(o, "\\n"); return 1;
    case '\r': put(o, "\\r"); return 1;
    case '\t': put(o, "\\t"); return 1;
    default: break;
    }
    if (cp == (uint32_t)quote) {
        put(o, "\\%c", quote);
        return 1;
    }
    if (cp < 0x20 || (cp >= 0x7f && cp <= 0xa0) || cp == 0xad) {
        put(o, "\\x%02x", cp);
        return 1;
    }
    if ((cp >= 0xd800 && cp <= 0xdfff) || cp == 0x2028 || cp == 0x2029) {
        put(o, "\\u%04x", cp);
        return 1;
    }
    if (cp > 0x10ffff) {
        put(o, "\\U%08x", cp);
        return 1;
    }
    return 0;
}

/* ---- str ------------------------------------------------------------ */

static int fmt_str(const pyval_ctx *c, uint64_t addr, outbuf *o)
{
    const py_layout *L = c->L;
    uint8_t hdr[128];
    if (L->u_compact_data > sizeof hdr || L->u_ascii_data > sizeof hdr ||
        rd(c, addr, hdr, L->u_compact_data) != 0)
        return -1;
    int64_t len = (int64_t)pysnap_u64(hdr, L->u_length);
    uint32_t state = pysnap_u32(hdr, L->u_state);
    unsigned kind = (state >> L->u_kind_shift) & 7;
    int compact = (state >> L->u_compact_bit) & 1, ascii = (state >> L->u_ascii_bit) & 1;
    if (L->u_ready_bit != PY_OFF_NONE && !((state >> L->u_ready_bit) & 1))
        return -1;
    if (len < 0 || len > PYVAL_LEN_MAX || (kind != 1 && kind != 2 && kind != 4) ||
        (ascii && kind != 1))
        return -1;
    int64_t n = len > PYVAL_MAX_CHARS ? PYVAL_MAX_CHARS : len;
    uint64_t daddr;
    if (compact)
        daddr = addr + (ascii ? L->u_ascii_data : L->u_compact_data);
    else if (L->u_legacy_data == PY_OFF_NONE || rd64(c, addr + L->u_legacy_data, &daddr) != 0)
        return -1;
    uint8_t data[PYVAL_MAX_CHARS * 4];
    if (n && rd(c, daddr, data, (size_t)n * kind) != 0)
        return -1;
    put(o, "'");
    for (int64_t i = 0; i < n; i++) {
        uint32_t cp = py_ucs_at(data, (int)kind, i);
        if (ascii && cp > 0x7f)
            return -1; /* not what an ASCII string holds: memory reused */
        if (!escaped(cp, '\'', o))
            put_utf8(o, cp);
    }
    put(o, "'");
    if (len > n)
        put(o, "\xe2\x80\xa6 (%lld characters)", (long long)len);
    return 0;
}

/* ---- bytes ---------------------------------------------------------- */

static int fmt_bytes(const pyval_ctx *c, uint64_t addr, outbuf *o)
{
    uint64_t size;
    if (rd64(c, addr + c->L->ob_size, &size) != 0 || (int64_t)size < 0 ||
        (int64_t)size > PYVAL_LEN_MAX)
        return -1;
    size_t n = size > PYVAL_MAX_CHARS ? PYVAL_MAX_CHARS : (size_t)size;
    uint8_t data[PYVAL_MAX_CHARS];
    if (n && rd(c, addr + c->L->by_sval, data, n) != 0)
        return -1;
    put(o, "b'");
    for (size_t i = 0; i < n; i++) {
        uint8_t b = data[i];
        if (b >= 0x80)
            put(o, "\\x%02x", b);
        else if (!escaped(b, '\'', o))
            put(o, "%c", b);
    }
    put(o, "'");
    if (size > n)
        put(o, "\xe2\x80\xa6 (%llu bytes)", (unsigned long long)size);
    return 0;
}

/* ---- int and bool --------------------------------------------------- */

/* The sign (-1, 0, 1) and digit count of the int at addr. */
static int int_shape(const pyval_ctx *c, uint64_t addr, int *sign, uint64_t *ndigits)
{
    const py_objlayout *O = c->O;
    uint64_t tag;
    if (O->lo_tag != PY_OFF_NONE) {
        /* 3.12+: lv_tag = digits << 3 | sign (0 positive, 1 zero, 2 negative) */
        if (rd64(c, addr + O->lo_tag, &tag) != 0 || (tag & 3) == 3)
            return -1;
        *ndigits = tag >> 3;
        *sign = (tag & 3) == 1 ? 0 : (tag & 3) == 2 ? -1 : 1;
        if ((*sign == 0) != (*ndigits == 0))
            return -1;
    } else {
        /* ≤3.11: ob_size is the digit count, negative for a negative int */
        if (rd64(c, addr + O->ob_size, &tag) != 0)
            return -1;
        int64_t s = (int64_t)tag;
        *sign = s < 0 ? -1 : s > 0;
        *ndigits = s < 0 ? (uint64_t)-s : (uint64_t)s;
    }
    return 0;
}

/* digits[0..n) (base 2^shift, least significant first) in decimal. */
static int put_decimal(outbuf *o, int sign, const uint32_t *digits, size_t n, unsigned shift)
{
    /* base 10^9 limbs, least significant first: each source digit is
     * folded in from the most significant end (limbs * 2^shift + d) */
    size_t cap = n * 2 + 2;
    uint32_t *dec = trc_malloc(cap * sizeof *dec);
    if (!dec)
        return -1;
    size_t nd = 0;
    for (size_t i = n; i-- > 0;) {
        uint64_t carry = digits[i];
        for (size_t k = 0; k < nd; k++) {
            uint64_t v = ((uint64_t)dec[k] << shift) + carry;
            dec[k] = (uint32_t)(v % 1000000000u);
            carry = v / 1000000000u;
        }
        while (carry) {
            dec[nd++] = (uint32_t)(carry % 1000000000u);
            carry /= 1000000000u;
        }
    }
    if (nd == 0) {
        put(o, "0");
    } else {
        put(o, "%s%u", sign < 0 ? "-" : "", dec[nd - 1]);
        for (size_t k = nd - 1; k-- > 0;)
            put(o, "%09u", dec[k]);
    }
    trc_free(dec);
    return 0;
}

static int fmt_int(const pyval_ctx *c, uint64_t addr, outbuf *o, int is_bool)
{
    const py_objlayout *O = c->O;
    int sign;
    uint64_t n;
    if (O->lo_digit_size != 4 || O->lo_shift == 0 || O->lo_shift > 31 ||
        int_shape(c, addr, &sign, &n) != 0)
        return -1;
    if (is_bool) {
        uint32_t d = 0;
        if (n > 1 || sign < 0 || (n == 1 && (rd(c, addr + O->lo_digits, &d, 4) != 0 || d != 1)))
            return -1;
        put(o, n ? "True" : "False");
        return 0;
    }
    if (n > PYVAL_INT_DIGITS) {
        put(o, "<int of %llu bits at 0x%llx>", (unsigned long long)(n * O->lo_shift),
            (unsigned long long)addr);
        return 0;
    }
    uint32_t digits[PYVAL_INT_DIGITS];
    if (n && rd(c, addr + O->lo_digits, digits, (size_t)n * 4) != 0)
        return -1;
    for (uint64_t i = 0; i < n; i++)
        if (digits[i] >> O->lo_shift)
            return -1; /* a digit too large: not an int */
    return put_decimal(o, sign, digits, (size_t)n, O->lo_shift);
}

/* ---- float ---------------------------------------------------------- */

/* As repr(float) prints it: the shortest digits that read back as the
 * same double, positional when the exponent is in [-4, 16), else with
 * an exponent. */
static void put_double(outbuf *o, double v)
{
    if (isnan(v)) {
        put(o, "nan");
        return;
    }
    if (isinf(v)) {
        put(o, v < 0 ? "-inf" : "inf");
        return;
    }
    char e[64];
    int prec;
    for (prec = 1; prec < 17; prec++) {
        snprintf(e, sizeof e, "%.*e", prec - 1, v);
        if (strtod(e, NULL) == v)
            break;
    }
    snprintf(e, sizeof e, "%.*e", prec - 1, v);
    int exp10 = atoi(strchr(e, 'e') + 1);
    if (exp10 >= -4 && exp10 < 16) {
        int decimals = prec - 1 - exp10;
        char f[64];
        snprintf(f, sizeof f, "%.*f", decimals > 0 ? decimals : 0, v);
        put(o, "%s%s", f, decimals > 0 ? "" : ".0");
        return;
    }
    /* mantissa digits, then e+XX / e-XX with at least two exponent digits */
    char *x = strchr(e, 'e');
    *x = '\0';
    put(o, "%se%c%02d", e, exp10 < 0 ? '-' : '+', exp10 < 0 ? -exp10 : exp10);
}

static int fmt_float(const pyval_ctx *c, uint64_t addr, outbuf *o)
{
    double v;
    if (rd(c, addr + c->V->fl_fval, &v, sizeof v) != 0)
        return -1;
    put_double(o, v);
    return 0;
}

/* ---- containers and everything else -------------------------------- */

static int fmt_sized(const pyval_ctx *c, uint64_t addr, uint32_t off, const char *type,
                     outbuf *o)
{
    uint64_t n;
    if (rd64(c, addr + off, &n) != 0 || (int64_t)n < 0 || (int64_t)n > PYVAL_LEN_MAX)
        return -1;
    put(o, "<%s of length %lld>", type, (long long)n);
    return 0;
}

/* "<TypeName at 0x…>", the name read from the type object. */
static int fmt_other(const pyval_ctx *c, uint64_t addr, uint64_t type, outbuf *o)
{
    uint64_t name;
    char s[PYVAL_MAX_CHARS + 1];
    if (rd64(c, type + c->V->tp_name, &name) != 0 || name == 0)
        return -1;
    /* tp_name may end near the end of a mapping: read less until it fits */
    size_t len = sizeof s - 1;
    while (len > 0 && rd(c, name, s, len) != 0)
        len /= 2;
    if (len == 0)
        return -1;
    s[len] = '\0';
    size_t k = strlen(s);
    if (k == 0)
        return -1;
    put(o, "<");
    for (size_t i = 0; i < k; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch < 0x20 || ch == 0x7f)
            put(o, "\\x%02x", ch);
        else
            put(o, "%c", ch);
    }
    put(o, " at 0x%llx>", (unsigned long long)addr);
    return 0;
}

int pyval_format(const pyval_ctx *c, uint64_t addr, char *buf, size_t cap)
{
    if (cap == 0)
        return -1;
    buf[0] = '\0';
    outbuf o = {buf, cap, 0};
    uint64_t type;
    int rc = -1;
    if (addr != 0 && (addr & 7) == 0 && rd64(c, addr + c->L->ob_type, &type) == 0 &&
        type != 0 && (type & 7) == 0) {
        if (c->none_type && type == c->none_type) {
            put(&o, "None");
            rc = 0;
        } else if (c->bool_type && type == c->bool_type) {
            rc = fmt_int(c, addr, &o, 1);
        } else if (c->long_type && type == c->long_type) {
            rc = fmt_int(c, addr, &o, 0);
        } else if (c->float_type && type == c->float_type) {
            rc = fmt_float(c, addr, &o);
        } else if (c->unicode_type && type == c->unicode_type) {
            rc = fmt_str(c, addr, &o);
        } else if (c->bytes_type && type == c->bytes_type) {
            rc = fmt_bytes(c, addr, &o);
        } else if (c->tuple_type && type == c->tuple_type) {
            rc = fmt_sized(c, addr, c->L->ob_size, "tuple", &o);
        } else if (c->list_type && type == c->list_type) {
            rc = fmt_sized(c, addr, c->L->ob_size, "list", &o);
        } else if (c->dict_type && type == c->dict_type) {
            rc = fmt_sized(c, addr, c->O->di_used, "dict", &o);
        } else {
            rc = fmt_other(c, addr, type, &o);
        }
    }
    if (rc != 0) {
        buf[0] = '\0';
        snprintf(buf, cap, "<unreadable at 0x%llx>", (unsigned long long)addr);
    }
    return rc;
}
