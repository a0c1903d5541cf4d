/*
 * lib/status.c — status strings, library version and the trace clock
 * (public API in include/trc/trc.h).
 */
#include "trc/trc.h"

#include <time.h>

const char *trc_status_str(trc_status st)
{
    switch (st) {
    case TRC_OK: return "success";
    case TRC_ERR_NOMEM: return "out of memory";
    case TRC_ERR_IO: return "input/output error";
    case TRC_ERR_CORRUPT: return "corrupt data";
    case TRC_ERR_TRUNCATED: return "input truncated";
    case TRC_ERR_VERSION: return "unsupported format version";
    case TRC_ERR_LIMIT: return "size limit exceeded";
    case TRC_ERR_ARG: return "invalid argument";
    case TRC_ERR_NOT_TRC: return "not a .trc file";
    case TRC_ERR_UNDEFINED: return "reference to undefined id";
    case TRC_ERR_EOF: return "end of input";
    }
    return "unknown status";
}

const char *trc_version(void)
{
    return TRC_VERSION_STRING;
}

int64_t trc_now_ns(void)
{
    struct timespec ts;
    /* CLOCK_MONOTONIC cannot fail with a valid pointer; keep 0 if it does. */
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
        return 0;
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
