/*
 * format/chunk.h — chunk framing of spec/DESIGN-NOTES.md "Chunk": the
 * 40-byte header (encode/decode with both CRCs) and the payload codec
 * (raw DEFLATE, RFC 1951, or stored).
 *
 * Header layout (little-endian):
 *   0  magic 89 54 52 43      4  major   5 minor   6 kind   7 flags
 *   8  u32 stored length     12  u32 decoded length
 *  16  u64 sequence          24  u64 base time (int64)
 *  32  u32 CRC-32 of stored payload   36  u32 CRC-32 of bytes 0..35
 *
 * The deflater/inflater keep one z_stream and one output buffer each and
 * reuse them for every chunk; zlib's own allocations go through
 * trc_malloc, so allocation-failure tests reach them too.
 */
#ifndef TRC_FORMAT_CHUNK_H
#define TRC_FORMAT_CHUNK_H

#include <stddef.h>
#include <stdint.h>

#include "trc/trc.h"
#include "format/buf.h"

#define TRCF_HEADER_SIZE 40
#define TRCF_MAGIC0 0x89
#define TRCF_MAGIC "\x89TRC"

enum trcf_chunk_kind { TRCF_KIND_SEGMENT = 1, TRCF_KIND_DATA = 2 };
#define TRCF_FLAG_DEFLATE 0x01u
#define TRCF_FLAGS_RESERVED 0xfeu

typedef struct trcf_chunk_header {
    uint8_t major, minor, kind, flags;
    uint32_t stored_len, decoded_len;
    uint64_t seq;
    int64_t base_time;
    uint32_t payload_crc;
    uint32_t header_crc;      /* as read (decode) or as computed (encode) */
} trcf_chunk_header;

/* Write the 40 header bytes, computing header_crc (payload_crc must be
 * set by the caller).  Cannot fail. */
void trcf_header_encode(const trcf_chunk_header *h, uint8_t out[TRCF_HEADER_SIZE]);

/* Decode 40 bytes.  TRC_OK, or TRC_ERR_NOT_TRC (no magic),
 * TRC_ERR_CORRUPT (header CRC mismatch), TRC_ERR_LIMIT (lengths over the
 * limits or impossible for the flags: stored != decoded when stored,
 * ratio above TRC_MAX_DEFLATE_RATIO).  Length checks only apply to
 * major 1; any major is returned so the caller can refuse it.  *why gets
 * a static phrase on failure.  *h is filled even on failure. */
trc_status trcf_header_decode(const uint8_t in[TRCF_HEADER_SIZE], trcf_chunk_header *h,
                              const char **why);

/* Nonzero if the 4 bytes at p are the chunk magic. */
int trcf_is_magic(const uint8_t *p);

/* ---- payload compression (writer side) ---- */

typedef struct trcf_deflater {
    void *zs;                 /* z_stream*, NULL until first use */
    int level;
    trcf_buf out;             /* header + stored payload of the last chunk */
} trcf_deflater;

/* Compression level meaning "the writer's default": level 6 with a
 * shorter match search suited to trace payloads (see chunk.c). */
#define TRCF_LEVEL_DEFAULT (-1)

/* Build one chunk (header + stored payload) from a decoded payload of
 * len <= TRC_MAX_CHUNK bytes into d->out (replacing its contents).
 * level 0 stores; 1..9 deflates with that zlib level, TRCF_LEVEL_DEFAULT
 * (any negative) with the tuned default; the deflated form is kept only
 * if smaller.
 * h: caller fills major..kind, seq, base_time; lengths, flags and CRCs
 * are set here.  TRC_ERR_NOMEM, TRC_ERR_LIMIT (len too big). */
trc_status trcf_chunk_build(trcf_deflater *d, int level, trcf_chunk_header *h,
                            const uint8_t *payload, size_t len);
void trcf_deflater_cleanup(trcf_deflater *d);

/* ---- payload decoding (reader side) ---- */

typedef struct trcf_inflater {
    void *zs;                 /* z_stream*, NULL until first use */
    trcf_buf out;             /* decoded payload of the last chunk */
} trcf_inflater;

/* Check the payload CRC of stored (h->stored_len bytes), then produce
 * the decoded payload: stored itself when not compressed, else inflated
 * into z->out (exactly h->decoded_len bytes; the stream must end exactly
 * at the stored length).  *out is borrowed until the next call.
 * TRC_ERR_CORRUPT (CRC or deflate data bad; *why says which),
 * TRC_ERR_NOMEM.  Assumes trcf_header_decode accepted h. */
trc_status trcf_payload_decode(trcf_inflater *z, const trcf_chunk_header *h,
                               const uint8_t *stored, const uint8_t **out, const char **why);
void trcf_inflater_cleanup(trcf_inflater *z);

#endif /* TRC_FORMAT_CHUNK_H */
