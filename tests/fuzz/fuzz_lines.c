/*
 * tests/fuzz/fuzz_lines.c — libFuzzer harness for trc-lines' sink
 * (lib/export/lines: per-line aggregation, the report as text and JSON),
 * fed by the reader through the pipeline with its call-site stage.
 * Target "lines" of tests/support/fuzz_sinks.h.
 */
#include "tests/fuzz/fuzz_common.h"

const char fuzz_target[] = "lines";
