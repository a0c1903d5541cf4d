/*
 * tests/fuzz/fuzz_common.c — the libFuzzer side shared by every harness
 * (mk/fuzz.mk, `make fuzz`).  Each input goes through the harness's
 * target of tests/support/fuzz_sinks.h with its output to /dev/null; a
 * broken invariant or an allocation over FS_ALLOC_CAP is reported on
 * stderr and turned into a crash (abort) so that libFuzzer saves it.
 *
 * The custom mutator alternates libFuzzer's own byte mutations with the
 * format-aware ones of tests/support/fuzz_mutate.c, which fix lengths
 * and CRCs so that mutants get past the chunk checks to the record
 * decoders, the reader's model and the converters.  Targets fed decoded
 * payloads (fuzz_records) keep libFuzzer's mutations only: there are no
 * chunks to fix up.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/fuzz/fuzz_common.h"
#include "tests/support/fuzz_mutate.h"
#include "tests/support/fuzz_sinks.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

static const fs_target *target;
static FILE *out;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    target = fs_find(fuzz_target);
    out = fopen("/dev/null", "w");
    if (!target || !out) {
        fprintf(stderr, "fuzz: no target '%s' or no /dev/null\n", fuzz_target);
        abort();
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char why[512];
    if (fs_run(target, data, size, out, why, sizeof why) != 0) {
        fprintf(stderr, "fuzz_%s: %s\n", target->name, why);
        abort();
    }
    return 0;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
    size_t n;
    uint8_t *m;
    if (!target->trc_input || seed % 3 == 0)
        return LLVMFuzzerMutate(data, size, max_size);
    m = fm_mutate(data, size, seed, 1 + (int)(seed % 5 == 0), &n, NULL);
    if (!m || n > max_size) {
        free(m);
        return LLVMFuzzerMutate(data, size, max_size);
    }
    for (size_t i = 0; i < n; i++)
        data[i] = m[i];
    free(m);
    return n;
}
