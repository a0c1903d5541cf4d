/*
 * lib/export/chrome/chrome_sink.c — the Chrome Trace exporter as a sink
 * (lib/export/sink.h; options: chrome_options).
 */
#include "lib/export/chrome/chrome.h"

static void *create(const void *opts) { return chrome_new(opts); }

static trc_status event(void *self, trc_reader *r, const trc_event *ev, FILE *out)
{
    return chrome_event(self, r, ev, out);
}

static trc_status hit(void *self, trc_reader *r, const exp_gpu_hit *h)
{
    chrome_gpu_hit(self, h);
    return TRC_OK;
}

static trc_status finish(void *self, trc_reader *r, FILE *out) { return chrome_finish(self, r, out); }
static void destroy(void *self) { chrome_free(self); }
static const char *error(const void *self) { return chrome_error(self); }

const exp_sink_type exp_sink_chrome = {"chrome", create, event, hit, finish, destroy, error};
