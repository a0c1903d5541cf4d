/*
 * tests/fuzz/fuzz_common.h — what a libFuzzer harness in tests/fuzz/
 * provides: the name of the tests/support/fuzz_sinks.h target it feeds.
 * Everything else (the entry point, the output file, the invariant and
 * allocation checks, the custom mutator) is tests/fuzz/fuzz_common.c,
 * linked into every harness by mk/fuzz.mk.
 */
#ifndef TRC_TESTS_FUZZ_COMMON_H
#define TRC_TESTS_FUZZ_COMMON_H

/* Defined by each harness: "chunk", "records", "reader", "collapsed", ... */
extern const char fuzz_target[];

#endif /* TRC_TESTS_FUZZ_COMMON_H */
