/*
 * lib/dump/dump_util.c — names and value formatting shared by the parts
 * of trc-dump (see lib/dump/dump.h): record type names (spec §7.0), event
 * and loss kind names (spec §8.8), string quoting, time formatting.
 */
#include "lib/dump/dump.h"

#include <inttypes.h>
#include <string.h>

static const char *const record_names[] = {
    NULL,          "SEGMENT_HEADER", "STRING",     "FRAME",      "STACK",
    "PROCESS",     "THREAD",         "SAMPLE",     "COUNTER_DEF", "COUNTER",
    "GPU_DEVICE",  "GPU_KERNEL",     "GPU_MEMCPY", "GPU_MEMSET", "GPU_SYNC",
    "API_CALL",    "MARKER",         "CLOCK_SYNC", "LOSS",       "PROCESS_EXIT",
    "SEGMENT_END", "GPU_CONTEXT",    "GPU_STREAM",
};

const char *dump_record_name(uint64_t type, char *buf, size_t len)
{
    if (type < sizeof record_names / sizeof record_names[0] && record_names[type])
        return record_names[type];
    /* Unknown types keep their number visible; spec §5.3 ranges. */
    snprintf(buf, len, "%s-%" PRIu64, type >= 1024 ? "PRIVATE" : "UNKNOWN", type);
    return buf;
}

static const char *const event_names[] = {
    "?",          "segment",     "process",    "thread",      "sample",     "gpu_device",
    "gpu_kernel", "gpu_memcpy",  "gpu_memset", "gpu_sync",    "api_call",   "marker",
    "counter_def", "counter",    "clock_sync", "loss",        "process_exit", "segment_end",
    "gpu_context", "gpu_stream",
};

const char *dump_event_name(trc_event_type t)
{
    if ((unsigned)t < sizeof event_names / sizeof event_names[0])
        return event_names[t];
    return "?";
}

static const char *const loss_names[] = {
    "?",             "samples_missed", "samples_invalid", "samples_late", "gpu_dropped",
    "chunk_damaged", "chunk_missing",  "truncated",       "undefined_ref", "other",
};

const char *dump_loss_name(trc_loss_kind k)
{
    if ((unsigned)k < sizeof loss_names / sizeof loss_names[0])
        return loss_names[k];
    return "other";
}

void dump_quote(FILE *out, const char *s, size_t len, size_t max)
{
    size_t i, n = len < max ? len : max;

    fputc('"', out);
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '"': fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\n': fputs("\\n", out); break;
        case '\t': fputs("\\t", out); break;
        case '\r': fputs("\\r", out); break;
        default:
            /* Bytes >= 0x7f are escaped too: the listing must stay ASCII
             * and show exactly what is in the file (spec §2.5). */
            if (c < 0x20 || c >= 0x7f)
                fprintf(out, "\\x%02x", c);
            else
                fputc(c, out);
        }
    }
    fputc('"', out);
    if (n < len)
        fputs("...", out);
}

void dump_time(FILE *out, int64_t ns)
{
    uint64_t mag = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    fprintf(out, "%s%" PRIu64 ".%09" PRIu64, ns < 0 ? "-" : "", mag / 1000000000u,
            mag % 1000000000u);
}

int dump_status_verdict(trc_status st, int had_data)
{
    switch (st) {
    case TRC_OK:
    case TRC_ERR_EOF:
        return DUMP_OK;
    case TRC_ERR_VERSION:
        return had_data ? DUMP_DAMAGED : DUMP_UNUSABLE;
    case TRC_ERR_CORRUPT:
    case TRC_ERR_TRUNCATED:
    case TRC_ERR_LIMIT:
    case TRC_ERR_UNDEFINED:
        return had_data ? DUMP_DAMAGED : DUMP_UNUSABLE;
    default:
        return DUMP_UNUSABLE;
    }
}
