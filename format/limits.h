/*
 * format/limits.h — the hard limits of format 1.0 (spec/DESIGN-NOTES.md,
 * "Chunk", "Primitive encodings", "Interned ids").  Readers check every
 * length, count and depth against these BEFORE allocating; writers refuse
 * to produce anything larger.
 */
#ifndef TRC_FORMAT_LIMITS_H
#define TRC_FORMAT_LIMITS_H

#define TRC_MAX_CHUNK (16u * 1024u * 1024u)            /* decoded payload bytes */
#define TRC_MAX_STORED (TRC_MAX_CHUNK + 64u * 1024u)   /* stored payload bytes */
#define TRC_MAX_STRING (1024u * 1024u)                 /* bytes in one str */
#define TRC_MAX_IDS (1u << 24)                         /* highest interned id */
#define TRC_MAX_ID_GAP 65536u                          /* new id <= highest + gap */
#define TRC_MAX_DEPTH 4096u                            /* frames in one stack */
#define TRC_MAX_METADATA 4096u                         /* SEGMENT_HEADER n_meta */

/* Raw DEFLATE cannot expand data by more than ~1032:1, so a compressed
 * chunk declaring a larger ratio is corrupt; checked before inflating. */
#define TRC_MAX_DEFLATE_RATIO 1032u

#endif /* TRC_FORMAT_LIMITS_H */
