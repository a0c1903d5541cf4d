/*
 * lib/export/common/gpu_units.c — nvprof-style number formatting (docs/design/outputs.md §5;
 * contract in gpu_units.h).  Integer arithmetic only (128-bit
 * intermediates where a product may pass 2^64), so that formatting a
 * million trace rows stays cheap and exact.
 */
#include "lib/export/common/gpu_units.h"

#include <string.h>

typedef unsigned __int128 u128;

static const uint64_t pow10_tab[20] = {
    1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
    100000000ull, 1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull,
    10000000000000ull, 100000000000000ull, 1000000000000000ull, 10000000000000000ull,
    100000000000000000ull, 1000000000000000000ull, 10000000000000000000ull};

static int digits_u64(uint64_t v)
{
    int d = 1;
    while (d < 20 && v >= pow10_tab[d])
        d++;
    return d;
}

char *gpu_fmt_u64(char *buf, uint64_t v)
{
    char *p = buf + GPU_NUM_BUF - 1;
    *p = '\0';
    do {
        *--p = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    return p;
}

/* Writes int_part[.frac] (frac with `dec` digits) then suffix at dst.
 * scaled = value * 10^dec.  Returns the end of the string. */
static char *put_scaled(char *dst, u128 scaled, int dec, const char *suffix)
{
    char tmp[GPU_NUM_BUF];
    uint64_t ip = (uint64_t)(scaled / pow10_tab[dec]);
    uint64_t fp = (uint64_t)(scaled % pow10_tab[dec]);
    const char *s = gpu_fmt_u64(tmp, ip);
    size_t n = strlen(s);
    memcpy(dst, s, n);
    dst += n;
    if (dec > 0) {
        *dst++ = '.';
        for (int i = dec - 1; i >= 0; i--) {
            dst[i] = (char)('0' + fp % 10);
            fp /= 10;
        }
        dst += dec;
    }
    n = strlen(suffix);
    memcpy(dst, suffix, n);
    dst += n;
    *dst = '\0';
    return dst;
}

/* value = num / den in base units; units[k] = den multiplier for unit k
 * (ascending), names[k] its suffix.  Picks the largest unit with an
 * integer part >= 1 and prints `sig` significant digits, carrying into
 * the next unit when rounding adds a digit ("999.995us" -> "1.0000ms"). */
static void put_sig(char *dst, u128 num, u128 den, const uint64_t *units,
                    const char *const *names, int nunits, int sig)
{
    int k = 0;
    while (k + 1 < nunits && num >= den * units[k + 1])
        k++;
    for (;;) {
        u128 d_unit = den * units[k];
        uint64_t ip = (uint64_t)(num / d_unit);
        int d = digits_u64(ip);
        int dec = sig - d;
        if (dec < 0)
            dec = 0;
        u128 scaled = (num * pow10_tab[dec] + d_unit / 2) / d_unit;
        int carried = scaled >= (u128)pow10_tab[d + dec];
        if (carried && k + 1 < nunits && scaled / pow10_tab[dec] >= units[k + 1] / units[k]) {
            k++;
            continue;
        }
        if (carried && dec > 0) {
            /* one more integer digit: drop one decimal and round again */
            dec--;
            scaled = (num * pow10_tab[dec] + d_unit / 2) / d_unit;
        }
        put_scaled(dst, scaled, dec, names[k]);
        return;
    }
}

char *gpu_fmt_time(char *buf, int64_t ns, int sig)
{
    static const uint64_t units[4] = {1ull, 1000ull, 1000000ull, 1000000000ull};
    static const char *const names[4] = {"ns", "us", "ms", "s"};
    char *p = buf;
    uint64_t u;
    if (sig < 1)
        sig = 1;
    if (sig > 9)
        sig = 9;
    if (ns < 0) {
        *p++ = '-';
        u = (uint64_t)(-(ns + 1)) + 1;
    } else {
        u = (uint64_t)ns;
    }
    if (u < 1000) {
        put_scaled(p, u, 0, "ns");
        return buf;
    }
    put_sig(p, u, 1, units + 1, names + 1, 3, sig);
    return buf;
}

static const uint64_t bin_units[5] = {1ull, 1ull << 10, 1ull << 20, 1ull << 30, 1ull << 40};

char *gpu_fmt_bytes(char *buf, uint64_t bytes)
{
    static const char *const names[5] = {"B", "KB", "MB", "GB", "TB"};
    if (bytes < 1024) {
        put_scaled(buf, bytes, 0, "B");
        return buf;
    }
    put_sig(buf, bytes, 1, bin_units + 1, names + 1, 4, 5);
    return buf;
}

char *gpu_fmt_throughput(char *buf, uint64_t bytes, int64_t ns)
{
    static const char *const names[5] = {"B/s", "KB/s", "MB/s", "GB/s", "TB/s"};
    if (ns <= 0) {
        strcpy(buf, "-");
        return buf;
    }
    u128 num = (u128)bytes * 1000000000u;
    u128 den = (u128)(uint64_t)ns;
    if (num < den * 1024u) {
        put_scaled(buf, (num + den / 2) / den, 0, "B/s");
        return buf;
    }
    put_sig(buf, num, den, bin_units + 1, names + 1, 4, 5);
    return buf;
}

char *gpu_fmt_fixed(char *buf, int64_t v, uint64_t divisor, int decimals)
{
    char *p = buf;
    uint64_t u;
    if (decimals < 0)
        decimals = 0;
    if (decimals > 9)
        decimals = 9;
    if (divisor == 0)
        divisor = 1;
    if (v < 0) {
        u = (uint64_t)(-(v + 1)) + 1;
    } else {
        u = (uint64_t)v;
    }
    u128 scaled = ((u128)u * pow10_tab[decimals] + divisor / 2) / divisor;
    if (v < 0 && scaled != 0)
        *p++ = '-';
    put_scaled(p, scaled, decimals, "");
    return buf;
}

char *gpu_fmt_rate(char *buf, uint64_t bytes, int64_t ns, uint64_t unit, int decimals)
{
    if (ns <= 0 || unit == 0) {
        buf[0] = '\0';
        return buf;
    }
    if (decimals < 0)
        decimals = 0;
    if (decimals > 6)
        decimals = 6;
    u128 num = (u128)bytes * 1000000000u * pow10_tab[decimals];
    u128 den = (u128)(uint64_t)ns * unit;
    put_scaled(buf, (num + den / 2) / den, decimals, "");
    return buf;
}

const char *gpu_copy_name(trc_copy_kind k)
{
    switch (k) {
    case TRC_COPY_HTOD: return "[CUDA memcpy HtoD]";
    case TRC_COPY_DTOH: return "[CUDA memcpy DtoH]";
    case TRC_COPY_HTOA: return "[CUDA memcpy HtoA]";
    case TRC_COPY_ATOH: return "[CUDA memcpy AtoH]";
    case TRC_COPY_ATOA: return "[CUDA memcpy AtoA]";
    case TRC_COPY_ATOD: return "[CUDA memcpy AtoD]";
    case TRC_COPY_DTOA: return "[CUDA memcpy DtoA]";
    case TRC_COPY_DTOD: return "[CUDA memcpy DtoD]";
    case TRC_COPY_HTOH: return "[CUDA memcpy HtoH]";
    case TRC_COPY_PTOP: return "[CUDA memcpy PtoP]";
    default: return "[CUDA memcpy]";
    }
}

const char *gpu_memset_name(void)
{
    return "[CUDA memset]";
}

const char *gpu_copy_short(trc_copy_kind k)
{
    switch (k) {
    case TRC_COPY_HTOD: return "HtoD";
    case TRC_COPY_DTOH: return "DtoH";
    case TRC_COPY_HTOA: return "HtoA";
    case TRC_COPY_ATOH: return "AtoH";
    case TRC_COPY_ATOA: return "AtoA";
    case TRC_COPY_ATOD: return "AtoD";
    case TRC_COPY_DTOA: return "DtoA";
    case TRC_COPY_DTOD: return "DtoD";
    case TRC_COPY_HTOH: return "HtoH";
    case TRC_COPY_PTOP: return "PtoP";
    default: return "Other";
    }
}

const char *gpu_mem_name(trc_mem_kind k)
{
    switch (k) {
    case TRC_MEM_PAGEABLE: return "Pageable";
    case TRC_MEM_PINNED: return "Pinned";
    case TRC_MEM_DEVICE: return "Device";
    case TRC_MEM_ARRAY: return "Array";
    case TRC_MEM_MANAGED: return "Managed";
    case TRC_MEM_DEVICE_STATIC: return "Device Static";
    case TRC_MEM_MANAGED_STATIC: return "Managed Static";
    default: return "-";
    }
}

const char *gpu_sync_name(trc_sync_kind k)
{
    switch (k) {
    case TRC_SYNC_EVENT: return "Event";
    case TRC_SYNC_STREAM_WAIT_EVENT: return "Stream Wait Event";
    case TRC_SYNC_STREAM: return "Stream";
    case TRC_SYNC_CONTEXT: return "Context";
    default: return "Unknown";
    }
}
