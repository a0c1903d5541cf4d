/*
 * lib/cupti/version.h — what the injection knows about CUPTI releases by
 * their API version number (cuptiGetVersion; docs/design/cupti.md §1, §7).
 *
 * Numbering (the comments of the CUPTI headers' cupti_version.h): up to
 * CUDA 12.9 a plain counter (24 = 12.6, 26 = 12.8, 27 = 12.9, 28 = 12.9
 * Update 1); from CUDA 13.0 on xxyyzz = CUDA major, minor, CUPTI patch
 * (130000 = 13.0, 130001 = 13.0 Update 1, 130100 = 13.1).  0 = unknown.
 */
#ifndef TRC_LIB_CUPTI_VERSION_H
#define TRC_LIB_CUPTI_VERSION_H

#include <stddef.h>
#include <stdint.h>

/* 1 for the releases whose cuptiActivityRegisterTimestampCallback can
 * leave kernel timestamps at zero: from CUDA 12.6 (its Update 2 brought
 * the bug, the counter does not tell updates apart) up to and excluding
 * 13.1, where NVIDIA's release notes say it is fixed.  0 for unknown. */
int cupti_version_ts_callback_broken(uint32_t version);

/* 1 when version is a later CUDA minor release than the headers this
 * library was built with (headers_version = CUPTI_API_VERSION): its
 * records may be longer and its callback ids more numerous. */
int cupti_version_newer_than(uint32_t version, uint32_t headers_version);

/* "13.0.1" for 130001, "API 24" for the old counter, "unknown" for 0. */
void cupti_version_text(uint32_t version, char *buf, size_t len);

#endif
