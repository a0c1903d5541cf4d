/*
 * lib/export/sink.c — an instance of a sink type (contract in sink.h).
 */
#include "lib/export/sink.h"

#include "lib/util/alloc.h"

struct exp_sink {
    const exp_sink_type *type;
    void *self;
};

exp_sink *exp_sink_new(const exp_sink_type *t, const void *opts)
{
    exp_sink *s = trc_calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->type = t;
    s->self = t->create(opts);
    if (!s->self) {
        trc_free(s);
        return NULL;
    }
    return s;
}

void exp_sink_free(exp_sink *s)
{
    if (!s)
        return;
    s->type->destroy(s->self);
    trc_free(s);
}

int exp_sink_takes_gpu_hits(const exp_sink *s)
{
    return s->type->gpu_hit != NULL;
}

trc_status exp_sink_event(exp_sink *s, trc_reader *r, const trc_event *ev, FILE *out)
{
    return s->type->event ? s->type->event(s->self, r, ev, out) : TRC_OK;
}

trc_status exp_sink_gpu_hit(exp_sink *s, trc_reader *r, const exp_gpu_hit *hit)
{
    return s->type->gpu_hit ? s->type->gpu_hit(s->self, r, hit) : TRC_OK;
}

trc_status exp_sink_finish(exp_sink *s, trc_reader *r, FILE *out)
{
    return s->type->finish(s->self, r, out);
}

const char *exp_sink_error(const exp_sink *s)
{
    const char *e = s->type->error ? s->type->error(s->self) : NULL;
    return e ? e : "";
}
