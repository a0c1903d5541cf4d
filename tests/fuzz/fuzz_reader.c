/*
 * tests/fuzz/fuzz_reader.c — libFuzzer harness for the public reader
 * (lib/reader.c, lib/reader_rec.c, lib/model.c) and trc-dump (lib/dump):
 * trc_reader_next to the end with every event checked (references
 * resolve, stacks bounded), whole and piecewise reads compared, then the
 * chunk listing, --check, --events and --summary.  Target "reader" of
 * tests/support/fuzz_sinks.h.
 */
#include "tests/fuzz/fuzz_common.h"

const char fuzz_target[] = "reader";
