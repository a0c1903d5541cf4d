/*
 * format/chunk.c — chunk header encode/decode and payload
 * deflate/inflate (spec/DESIGN-NOTES.md "Chunk"; see format/chunk.h).
 */
#include "format/chunk.h"

#include <string.h>
#include <zlib.h>

#include "lib/util/alloc.h"
#include "format/crc32.h"
#include "format/limits.h"
#include "format/varint.h"

/* zlib allocates through these so allocation-failure tests cover it. */
static voidpf z_alloc(voidpf opaque, uInt items, uInt size)
{
    (void)opaque;
    return trc_calloc(items, size);
}

static void z_free(voidpf opaque, voidpf p)
{
    (void)opaque;
    trc_free(p);
}

int trcf_is_magic(const uint8_t *p)
{
    return memcmp(p, TRCF_MAGIC, 4) == 0;
}

void trcf_header_encode(const trcf_chunk_header *h, uint8_t out[TRCF_HEADER_SIZE])
{
    memcpy(out, TRCF_MAGIC, 4);
    out[4] = h->major;
    out[5] = h->minor;
    out[6] = h->kind;
    out[7] = h->flags;
    trcf_put_u32le(out + 8, h->stored_len);
    trcf_put_u32le(out + 12, h->decoded_len);
    trcf_put_u64le(out + 16, h->seq);
    trcf_put_u64le(out + 24, (uint64_t)h->base_time);
    trcf_put_u32le(out + 32, h->payload_crc);
    trcf_put_u32le(out + 36, trcf_crc32(0, out, 36));
}

trc_status trcf_header_decode(const uint8_t in[TRCF_HEADER_SIZE], trcf_chunk_header *h,
                              const char **why)
{
    h->major = in[4];
    h->minor = in[5];
    h->kind = in[6];
    h->flags = in[7];
    h->stored_len = trcf_get_u32le(in + 8);
    h->decoded_len = trcf_get_u32le(in + 12);
    h->seq = trcf_get_u64le(in + 16);
    h->base_time = (int64_t)trcf_get_u64le(in + 24);
    h->payload_crc = trcf_get_u32le(in + 32);
    h->header_crc = trcf_get_u32le(in + 36);
    if (!trcf_is_magic(in)) {
        *why = "bad chunk magic";
        return TRC_ERR_NOT_TRC;
    }
    if (trcf_crc32(0, in, 36) != h->header_crc) {
        *why = "bad chunk header CRC";
        return TRC_ERR_CORRUPT;
    }
    if (h->major != TRC_FORMAT_MAJOR)
        return TRC_OK;          /* caller refuses it; its lengths mean nothing to us */
    if (h->stored_len > TRC_MAX_STORED || h->decoded_len > TRC_MAX_CHUNK) {
        *why = "chunk length over the 16 MiB limit";
        return TRC_ERR_LIMIT;
    }
    if (!(h->flags & TRCF_FLAG_DEFLATE) && h->stored_len != h->decoded_len) {
        *why = "stored and decoded lengths differ in an uncompressed chunk";
        return TRC_ERR_LIMIT;
    }
    if ((h->flags & TRCF_FLAG_DEFLATE) &&
        (uint64_t)h->decoded_len > (uint64_t)h->stored_len * TRC_MAX_DEFLATE_RATIO + 64) {
        *why = "impossible compression ratio";
        return TRC_ERR_LIMIT;
    }
    return TRC_OK;
}

/* ---- deflate ---- */

/* Level 6's lazy matching with shorter hash chains.  Trace payloads are
 * full of short repeats (record headers, small ids), so zlib's level-6
 * chain of 128 is walked to the end at nearly every byte; a chain of 8
 * gave 2.4-2.8x faster deflate on 256 KiB chunks of sample records for
 * about 2% more bytes (bench/format_bench.c workloads). */
#define TUNED_LEVEL 6
#define TUNED_GOOD 8
#define TUNED_LAZY 16
#define TUNED_NICE 32
#define TUNED_CHAIN 8

/* Ready d->zs for one stream at `level` (TRCF_LEVEL_DEFAULT = tuned). */
static trc_status deflater_start(trcf_deflater *d, int level)
{
    int zlevel = level == TRCF_LEVEL_DEFAULT ? TUNED_LEVEL : level;
    z_stream *zs;

    if (d->zs && d->level == level) {
        if (deflateReset(d->zs) != Z_OK)
            return TRC_ERR_NOMEM;
        goto tune;
    }
    if (d->zs) {
        deflateEnd(d->zs);
        trc_free(d->zs);
        d->zs = NULL;
    }
    zs = trc_calloc(1, sizeof *zs);
    if (!zs)
        return TRC_ERR_NOMEM;
    zs->zalloc = z_alloc;
    zs->zfree = z_free;
    if (deflateInit2(zs, zlevel, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        trc_free(zs);
        return TRC_ERR_NOMEM;
    }
    d->zs = zs;
    d->level = level;
tune:
    /* deflateReset reloads the level's table, so tune after every reset. */
    if (level == TRCF_LEVEL_DEFAULT)
        deflateTune(d->zs, TUNED_GOOD, TUNED_LAZY, TUNED_NICE, TUNED_CHAIN);
    return TRC_OK;
}

trc_status trcf_chunk_build(trcf_deflater *d, int level, trcf_chunk_header *h,
                            const uint8_t *payload, size_t len)
{
    trc_status st;
    size_t bound;
    z_stream *zs;

    if (len > TRC_MAX_CHUNK)
        return TRC_ERR_LIMIT;
    d->out.len = 0;
    h->flags = 0;
    h->decoded_len = (uint32_t)len;
    if (level > 9)
        level = 9;
    if (level != 0 && len > 0) {
        st = deflater_start(d, level < 0 ? TRCF_LEVEL_DEFAULT : level);
        if (st != TRC_OK)
            return st;
        zs = d->zs;
        bound = deflateBound(zs, (uLong)len);
        st = trcf_buf_reserve(&d->out, TRCF_HEADER_SIZE + bound);
        if (st != TRC_OK)
            return st;
        zs->next_in = (Bytef *)(uintptr_t)payload;
        zs->avail_in = (uInt)len;
        zs->next_out = d->out.data + TRCF_HEADER_SIZE;
        zs->avail_out = (uInt)bound;
        if (deflate(zs, Z_FINISH) != Z_STREAM_END)
            return TRC_ERR_NOMEM;   /* cannot happen with deflateBound room */
        if (zs->total_out < len) {
            h->flags = TRCF_FLAG_DEFLATE;
            h->stored_len = (uint32_t)zs->total_out;
        }
    }
    if (!(h->flags & TRCF_FLAG_DEFLATE)) {
        st = trcf_buf_reserve(&d->out, TRCF_HEADER_SIZE + len);
        if (st != TRC_OK)
            return st;
        if (len)
            memcpy(d->out.data + TRCF_HEADER_SIZE, payload, len);
        h->stored_len = (uint32_t)len;
    }
    h->payload_crc = trcf_crc32(0, d->out.data + TRCF_HEADER_SIZE, h->stored_len);
    trcf_header_encode(h, d->out.data);
    h->header_crc = trcf_get_u32le(d->out.data + 36);
    d->out.len = TRCF_HEADER_SIZE + h->stored_len;
    return TRC_OK;
}

void trcf_deflater_cleanup(trcf_deflater *d)
{
    if (d->zs) {
        deflateEnd(d->zs);
        trc_free(d->zs);
        d->zs = NULL;
    }
    trcf_buf_free(&d->out);
}

/* ---- inflate ---- */

trc_status trcf_payload_decode(trcf_inflater *z, const trcf_chunk_header *h,
                               const uint8_t *stored, const uint8_t **out, const char **why)
{
    z_stream *zs;
    trc_status st;
    int zr;

    if (trcf_crc32(0, stored, h->stored_len) != h->payload_crc) {
        *why = "bad payload CRC";
        return TRC_ERR_CORRUPT;
    }
    if (!(h->flags & TRCF_FLAG_DEFLATE)) {
        *out = stored;
        return TRC_OK;
    }
    if (!z->zs) {
        zs = trc_calloc(1, sizeof *zs);
        if (!zs)
            return TRC_ERR_NOMEM;
        zs->zalloc = z_alloc;
        zs->zfree = z_free;
        if (inflateInit2(zs, -15) != Z_OK) {
            trc_free(zs);
            return TRC_ERR_NOMEM;
        }
        z->zs = zs;
    } else {
        zs = z->zs;
        if (inflateReset(zs) != Z_OK)
            return TRC_ERR_NOMEM;
    }
    /* decoded_len was checked against TRC_MAX_CHUNK before we got here;
     * one spare byte lets us notice a stream that decodes to more. */
    z->out.len = 0;
    st = trcf_buf_reserve(&z->out, (size_t)h->decoded_len + 1);
    if (st != TRC_OK)
        return st;
    zs->next_in = (Bytef *)(uintptr_t)stored;
    zs->avail_in = h->stored_len;
    zs->next_out = z->out.data;
    zs->avail_out = h->decoded_len + 1;
    zr = inflate(zs, Z_FINISH);
    if (zr == Z_MEM_ERROR)
        return TRC_ERR_NOMEM;
    if (zr != Z_STREAM_END) {
        *why = zr == Z_DATA_ERROR ? "bad deflate data" : "deflate data ends early";
        return TRC_ERR_CORRUPT;
    }
    if (zs->total_out != h->decoded_len) {
        *why = "decoded length differs from the header";
        return TRC_ERR_CORRUPT;
    }
    if (zs->avail_in != 0) {
        *why = "bytes after the end of the deflate stream";
        return TRC_ERR_CORRUPT;
    }
    z->out.len = h->decoded_len;
    *out = z->out.data;
    return TRC_OK;
}

void trcf_inflater_cleanup(trcf_inflater *z)
{
    if (z->zs) {
        inflateEnd(z->zs);
        trc_free(z->zs);
        z->zs = NULL;
    }
    trcf_buf_free(&z->out);
}
