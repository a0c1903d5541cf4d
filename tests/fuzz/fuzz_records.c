/*
 * tests/fuzz/fuzz_records.c — libFuzzer harness for the record layer
 * (format/record.c framing, format/records.c bodies): the input is one
 * decoded chunk payload (seeds: the payloads of the fixtures, written by
 * tests/fuzz/payloads.c); every record of a known type is decoded, and
 * encode(decode(body)) must decode and re-encode to the same bytes.
 * Target "records" of tests/support/fuzz_sinks.h.
 */
#include "tests/fuzz/fuzz_common.h"

const char fuzz_target[] = "records";
