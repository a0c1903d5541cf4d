/*
 * lib/cupti/version.c — CUPTI release facts by API version number
 * (contracts in version.h).
 */
#include "lib/cupti/version.h"

#include <stdio.h>

/* First number of the xxyyzz scheme (CUDA 13.0). */
#define XXYYZZ_FIRST 130000u

int cupti_version_ts_callback_broken(uint32_t version)
{
    return version >= 24 && version < 130100;
}

int cupti_version_newer_than(uint32_t version, uint32_t headers_version)
{
    /* only the xxyyzz scheme is comparable by minor release; patch
     * numbers (zz) keep the record layouts */
    if (version < XXYYZZ_FIRST || headers_version < XXYYZZ_FIRST)
        return version > headers_version && headers_version < XXYYZZ_FIRST;
    return version / 100 > headers_version / 100;
}

void cupti_version_text(uint32_t version, char *buf, size_t len)
{
    if (version == 0)
        snprintf(buf, len, "unknown");
    else if (version < XXYYZZ_FIRST)
        snprintf(buf, len, "API %u", (unsigned)version);
    else
        snprintf(buf, len, "%u.%u.%u", (unsigned)(version / 10000),
                 (unsigned)(version / 100 % 100), (unsigned)(version % 100));
}
