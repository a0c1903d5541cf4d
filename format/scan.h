/*
 * format/scan.h — pull chunks out of a byte stream (spec/DESIGN-NOTES.md
 * "Chunk": verification and resynchronisation).
 *
 * The scanner reads through a trc_read_fn in big blocks, never seeks, and
 * yields one trcf_chunk_info per call: a good chunk with its decoded
 * payload, a chunk it skips (unknown kind, reserved flags, other major
 * version), a damaged region (with its offset, its length and why), or
 * the truncated tail of the input.  After damage it resynchronises by
 * scanning byte by byte for the next magic whose header CRC checks.  The
 * chunk kind, sequence and version policies are the caller's (the reader
 * in lib/reader.c, or trc-dump).
 *
 * Typical use (a dumper):
 *
 *     trcf_scanner *s = trcf_scanner_new(read_fn, ctx, &st);
 *     trcf_chunk_info ci;
 *     while ((st = trcf_chunk_next(s, &ci)) == TRC_OK) {
 *         if (ci.state == TRCF_CHUNK_OK) {
 *             trcf_rec_iter it;  trcf_record rec;     // format/record.h
 *             trcf_rec_iter_init(&it, ci.payload, ci.h.decoded_len);
 *             while (trcf_record_next(&it, &rec) == TRC_OK) ...
 *         } else printf("0x%llx: %s\n", ci.offset, ci.why);
 *     }
 *     // st: TRC_ERR_EOF at the end; TRC_ERR_NOT_TRC, _IO, _NOMEM stop.
 *     trcf_scanner_free(s);
 */
#ifndef TRC_FORMAT_SCAN_H
#define TRC_FORMAT_SCAN_H

#include <stddef.h>
#include <stdint.h>

#include "trc/trc.h"
#include "format/chunk.h"

typedef enum trcf_chunk_state {
    TRCF_CHUNK_OK = 0,        /* verified; payload holds h.decoded_len bytes */
    TRCF_CHUNK_SKIPPED,       /* well framed, CRC good, but not readable by us:
                                 kind not 1/2, reserved flag bits, major != 1 */
    TRCF_CHUNK_DAMAGED,       /* bytes [offset, offset+length) failed a check */
    TRCF_CHUNK_TRUNCATED      /* the input ends inside a chunk at offset */
} trcf_chunk_state;

typedef struct trcf_chunk_info {
    trcf_chunk_state state;
    uint64_t offset;          /* input offset of the chunk or damaged region */
    uint64_t length;          /* bytes it covers (header + stored payload for
                                 good/skipped chunks; bytes skipped otherwise) */
    int have_header;          /* h is a header whose CRC checked */
    trcf_chunk_header h;
    const uint8_t *payload;   /* TRCF_CHUNK_OK: decoded payload, borrowed
                                 until the next call; NULL otherwise */
    const char *why;          /* static phrase for SKIPPED/DAMAGED/TRUNCATED */
} trcf_chunk_info;

typedef struct trcf_scanner trcf_scanner;

/* New scanner over fn/ctx (borrowed; must outlive the scanner).  NULL on
 * allocation failure (*st = TRC_ERR_NOMEM). */
trcf_scanner *trcf_scanner_new(trc_read_fn fn, void *ctx, trc_status *st);
void trcf_scanner_free(trcf_scanner *s);

/* Next chunk.  TRC_OK with *ci filled; TRC_ERR_EOF at the clean end;
 * TRC_ERR_NOT_TRC only as the first result, when the input's first four
 * bytes are not the magic (empty and shorter inputs included; *ci then
 * has why set); TRC_ERR_IO (errno
 * in trcf_scanner_errno) and TRC_ERR_NOMEM stop the scan. */
trc_status trcf_chunk_next(trcf_scanner *s, trcf_chunk_info *ci);

/* Bytes of input consumed so far (= offset of the next chunk). */
uint64_t trcf_scanner_offset(const trcf_scanner *s);
/* errno of the last TRC_ERR_IO. */
int trcf_scanner_errno(const trcf_scanner *s);

#endif /* TRC_FORMAT_SCAN_H */
