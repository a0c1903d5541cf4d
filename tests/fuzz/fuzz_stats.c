/*
 * tests/fuzz/fuzz_stats.c — libFuzzer harness for the cProfile model
 * (lib/export/folded/stats.c) and its two outputs: trc-stats' table
 * (tools/common/stats_table.c, default and --sort tottime --limit
 * --callers/--callees) and trc2pstats' marshal file (lib/export/folded/pstats.c),
 * fed by the reader.  Target "stats" of tests/support/fuzz_sinks.h.
 */
#include "tests/fuzz/fuzz_common.h"

const char fuzz_target[] = "stats";
