/*
 * tests/gpu/scenario_check.h — the record-by-record checks a complete
 * side trace of the standard fake-CUPTI scenario (fake_cupti.h,
 * fake_cupti_scenario) must pass, however it was produced: counts per
 * record kind, correlation of every activity to its API call, copy
 * kinds, streams, contexts and default streams, overlap, demangled
 * names, NVTX ranges, losses.  Fails the running cmocka test.
 */
#ifndef TRC_TESTS_GPU_SCENARIO_CHECK_H
#define TRC_TESTS_GPU_SCENARIO_CHECK_H

#include <stdint.h>

#include "tests/gpu/fake_cupti.h"
#include "tests/gpu/trace_check.h"

/* t: the loaded side trace; sc: what fake_cupti_scenario reported; pid:
 * the process that recorded it (records carry it). */
void fake_scenario_check(const tc_trace *t, const fake_scenario *sc, int64_t pid);

#endif
