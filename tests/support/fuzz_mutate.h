/*
 * tests/support/fuzz_mutate.h — deterministic, seeded mutations of .trc
 * bytes for robustness tests ("treat every byte as hostile").
 *
 * Mutations work at three levels (spec/DESIGN-NOTES.md "Chunk",
 * "Payload"):
 *   - raw bytes: bit flips, bytes set to 0x00/0xff/0x80/random,
 *     truncation, inserted garbage; the CRCs then catch them;
 *   - chunks: duplicate, remove, swap; header fields (lengths set huge,
 *     kind/flags/major/seq/base time) rewritten WITH the header CRC
 *     recomputed, so the length and payload checks are reached;
 *   - records: the payload is decoded (inflated), mutated (bytes, varints
 *     lengthened, varints replaced by huge values, records duplicated,
 *     removed, swapped, retyped, must-understand set) and re-encoded
 *     with lengths and both CRCs fixed, so the record decoders and the
 *     reader's model get hostile input behind valid checks.
 * Everything is a pure function of (input, seed): the same seed gives
 * the same mutant on every machine.  Allocates with plain malloc.
 */
#ifndef TRC_TESTS_SUPPORT_FUZZ_MUTATE_H
#define TRC_TESTS_SUPPORT_FUZZ_MUTATE_H

#include <stddef.h>
#include <stdint.h>

/* What one mutation did (for messages), and whether the CRCs were fixed. */
typedef struct fm_info {
    char what[160];
    int crc_fixed;        /* 1: the mutated chunk(s) still pass their CRC checks */
    int raw_damage;       /* 1: a single raw change inside a framed chunk, CRCs not fixed */
} fm_info;

/* Mutate in[0..len) with seed; returns a malloc'd buffer (*out_len bytes,
 * may be 0 bytes but never NULL) the caller frees.  rounds >= 1
 * mutations are stacked.  info may be NULL.  Returns NULL only if
 * malloc fails. */
uint8_t *fm_mutate(const uint8_t *in, size_t len, uint64_t seed, int rounds, size_t *out_len,
                   fm_info *info);

/* One deterministic pseudo-random 64-bit value from *state (splitmix64). */
uint64_t fm_rand(uint64_t *state);

#endif /* TRC_TESTS_SUPPORT_FUZZ_MUTATE_H */
