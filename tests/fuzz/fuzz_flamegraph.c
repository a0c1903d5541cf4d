/*
 * tests/fuzz/fuzz_flamegraph.c — libFuzzer harness for trc2flamegraph's
 * sinks (lib/export/flamegraph/) fed by the reader through the tools'
 * selection filter, with default options and with every option on, and
 * again as a --diff against its own tree; every SVG written must be XML
 * text (UTF-8, no control characters).  Target "flamegraph" of
 * tests/support/fuzz_sinks.h.
 */
#include "tests/fuzz/fuzz_common.h"

const char fuzz_target[] = "flamegraph";
