/*
 * tests/fuzz/fuzz_chunk.c — libFuzzer harness for chunk framing
 * (format/scan.c, format/chunk.c): a .trc input scanned to the end in one
 * read and in reads of 1-7 bytes (both must see the same chunks),
 * payloads inflated and CRC-checked, every good chunk rebuilt stored and
 * deflated and decoded back.  Target "chunk" of tests/support/fuzz_sinks.h.
 */
#include "tests/fuzz/fuzz_common.h"

const char fuzz_target[] = "chunk";
