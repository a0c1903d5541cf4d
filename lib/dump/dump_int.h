/*
 * lib/dump/dump_int.h — pieces shared inside lib/dump: the segment-local
 * string table the listing keeps so that `sref` fields can be shown with
 * their text, and the printer of decoded record fields (spec §7).
 */
#ifndef TRC_LIB_DUMP_DUMP_INT_H
#define TRC_LIB_DUMP_DUMP_INT_H

#include <stdint.h>
#include <stdio.h>

#include "format/records.h"

/* Strings of the current segment, by segment-local id.  Only the first
 * DUMP_STR_KEEP bytes of each are kept: the listing shows no more. */
#define DUMP_STR_KEEP 64

typedef struct dump_strtab {
    char **s;            /* s[id], NUL-terminated copy or NULL; s[0] unused */
    uint32_t *len;       /* full length of s[id] as defined */
    size_t cap;
} dump_strtab;

/* Forget every string (a SEGMENT chunk starts, spec §6.2).  Cannot fail. */
void dump_strtab_reset(dump_strtab *t);
/* Remember string `id`; TRC_ERR_NOMEM, or TRC_ERR_LIMIT for an id over
 * TRC_MAX_IDS (the record is then shown without it).  Copies the bytes. */
trc_status dump_strtab_put(dump_strtab *t, uint64_t id, const char *p, size_t len);
void dump_strtab_cleanup(dump_strtab *t);

/* Print " key=value" for every field of a decoded body of known `type`.
 * sref fields show the id and, when known, the text. */
void dump_fields(FILE *out, uint64_t type, const trcf_body *b, const dump_strtab *t);

#endif /* TRC_LIB_DUMP_DUMP_INT_H */
