/*
 * tests/fuzz/fuzz_chrome.c — libFuzzer harness for trc2chrome's sink
 * (lib/export/chrome/chrome*.c): thread slices, GPU stream tracks, API calls,
 * flows, markers, counters, with and without --lines, fed by the reader.
 * Target "chrome" of tests/support/fuzz_sinks.h.
 */
#include "tests/fuzz/fuzz_common.h"

const char fuzz_target[] = "chrome";
