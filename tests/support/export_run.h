/*
 * tests/support/export_run.h — running the speedscope or Chrome exporter
 * over a trace file in a unit test, the way trc2speedscope and trc2chrome
 * do (the real reader, the converters' own selection code), and reading
 * its JSON back with cJSON.  Shared by the exporters' unit tests
 * (tests/unit/export/chrome/, speedscope/); failures are cmocka
 * assertions of the calling test.
 */
#ifndef TRC_TESTS_SUPPORT_EXPORT_RUN_H
#define TRC_TESTS_SUPPORT_EXPORT_RUN_H

#include <cjson/cJSON.h>

#include "lib/export/chrome/chrome.h"
#include "lib/export/speedscope/speedscope.h"
#include "trc/trc.h"

typedef struct export_run_opts {
    int chrome;               /* the Chrome exporter; else speedscope's */
    int all;                  /* every event reaches the exporter, unselected */
    sscope_options ss;
    chrome_options ch;
    int idle, gil;            /* the converters' --idle, --gil */
    const char *from, *to;    /* --from, --to */
    const char *thread;       /* one --thread */
} export_run_opts;

/* The exporter's output for path (caller frees), or NULL with *st_out
 * saying why an exporter or reader call failed. */
char *export_run(const char *path, const export_run_opts *o, trc_status *st_out);
/* The same, which must succeed and parse; *text (if not NULL) gets the
 * text, else it is freed.  The caller deletes the document. */
cJSON *export_run_json(const char *path, const export_run_opts *o, char **text);
/* Fail the Nth allocation for N = 1, 2, ... until a run makes no more:
 * every run ends in TRC_ERR_NOMEM or in exactly the output of a run
 * without failures, and more than 20 runs failed. */
void export_run_nomem(const char *path, const export_run_opts *o);
/* The same for the temporary file (lib/util/spill.h's hook): fail the
 * Nth spill operation for N = 1, 2, ... until a run makes no more; every
 * run ends in TRC_ERR_IO or in exactly the output of a run without
 * failures, and at least min_failures runs failed. */
void export_run_ioerr(const char *path, const export_run_opts *o, int min_failures);

/* Members that must be there (of the type named). */
cJSON *json_get(const cJSON *obj, const char *key);
const char *json_str(const cJSON *obj, const char *key);
double json_num(const cJSON *obj, const char *key);

#endif
