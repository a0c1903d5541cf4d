/*
 * lib/export/speedscope/speedscope_sink.c — the speedscope exporter as a
 * sink (lib/export/sink.h; options: sscope_options).
 */
#include "lib/export/speedscope/speedscope.h"

static void *create(const void *opts) { return sscope_new(opts); }

static trc_status event(void *self, trc_reader *r, const trc_event *ev, FILE *out)
{
    return sscope_event(self, r, ev);
}

static trc_status hit(void *self, trc_reader *r, const exp_gpu_hit *h)
{
    sscope_gpu_hit(self, h);
    return TRC_OK;
}

static trc_status finish(void *self, trc_reader *r, FILE *out) { return sscope_finish(self, r, out); }
static void destroy(void *self) { sscope_free(self); }
static const char *error(const void *self) { return sscope_error(self); }

const exp_sink_type exp_sink_speedscope = {"speedscope", create, event, hit, finish, destroy,
                                           error};
