/*
 * tests/fuzz/fuzz_collapsed.c — libFuzzer harness for trc2collapsed's
 * sink (lib/export/common/collapsed.c) fed by the reader through the tools'
 * selection filter, with default options and with --threads --pids
 * --no-lines --full-filenames --weight us --idle --from/--to.  Target
 * "collapsed" of tests/support/fuzz_sinks.h.
 */
#include "tests/fuzz/fuzz_common.h"

const char fuzz_target[] = "collapsed";
