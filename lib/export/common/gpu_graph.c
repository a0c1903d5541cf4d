/*
 * lib/export/common/gpu_graph.c — where a CUDA graph was captured
 * (contract in gpu_graph.h).
 */
#include "lib/export/common/gpu_graph.h"

#include <inttypes.h>

#include "lib/util/alloc.h"
#include "lib/util/grow.h"
#include "lib/util/hashtab.h"

/* What a call said about an id (spec [R-API-3]). */
enum {
    BY_EXEC = 0,     /* id = an executable graph: `graph` is its graph */
    BY_CAPTURE = 1,  /* id = a graph a stream capture ended with */
    BY_INSTANTIATE = 2 /* id = a graph instantiated */
};

typedef struct known {
    int64_t pid;
    uint32_t id;
    uint32_t kind;
    uint32_t graph;          /* BY_EXEC only */
    uint32_t stack;          /* the call's stack, 0 = none */
} known;

typedef struct replay {
    int64_t pid;
    uint32_t graph;
    uint32_t launch;         /* launching stack, 0 = none */
    uint64_t kernels, ns;
} replay;

struct exp_gpu_graph {
    known *known;
    uint32_t n_known, cap_known;
    trch_index known_index;
    replay *replays;
    uint32_t n_replays, cap_replays;
    trch_index replay_index;
};

exp_gpu_graph *exp_gpu_graph_new(void)
{
    return trc_calloc(1, sizeof(exp_gpu_graph));
}

void exp_gpu_graph_free(exp_gpu_graph *g)
{
    if (!g)
        return;
    trch_index_cleanup(&g->known_index);
    trch_index_cleanup(&g->replay_index);
    trc_free(g->known);
    trc_free(g->replays);
    trc_free(g);
}

static uint64_t known_hash(int64_t pid, uint32_t kind, uint32_t id)
{
    return trch_hash_more_u64(trch_hash_u64((uint64_t)pid), ((uint64_t)kind << 32) | id);
}

static known *find_known(const exp_gpu_graph *g, int64_t pid, uint32_t kind, uint32_t id)
{
    trch_probe p;
    for (uint32_t i = trch_first(&g->known_index, known_hash(pid, kind, id), &p); i != TRCH_NONE;
         i = trch_next(&g->known_index, &p)) {
        known *k = &g->known[i];
        if (k->pid == pid && k->kind == kind && k->id == id)
            return k;
    }
    return NULL;
}

/* The latest call wins: an id may be reused after its graph is gone. */
static trc_status put_known(exp_gpu_graph *g, int64_t pid, uint32_t kind, uint32_t id,
                            uint32_t graph, uint32_t stack)
{
    known *k = find_known(g, pid, kind, id);
    if (!k) {
        if (g->n_known >= UINT32_MAX - 1)
            return TRC_ERR_LIMIT;
        trc_status st = trcu_grow32(&g->known, &g->cap_known, g->n_known, sizeof *g->known);
        if (st == TRC_OK)
            st = trch_add(&g->known_index, known_hash(pid, kind, id), g->n_known);
        if (st != TRC_OK)
            return st;
        k = &g->known[g->n_known++];
    }
    *k = (known){ pid, id, kind, graph, stack };
    return TRC_OK;
}

trc_status exp_gpu_graph_event(exp_gpu_graph *g, const trc_reader *r, const trc_event *ev)
{
    if (ev->type != TRC_EV_API_CALL || (!ev->u.api.graph && !ev->u.api.graph_exec))
        return TRC_OK;
    const trc_api_call *a = &ev->u.api;
    const trc_thread *t = trc_reader_thread(r, a->thread);
    int64_t pid = t ? t->pid : 0;
    uint32_t stack = a->flags & TRC_API_NO_PYTHON ? 0 : a->stack;
    trc_status st = TRC_OK;

    if (a->graph_exec)
        st = put_known(g, pid, BY_EXEC, a->graph_exec, a->graph, stack);
    /* a capture's stack is kept even when an instantiation comes later:
     * the capture is the line that says what the graph does */
    if (st == TRC_OK && a->graph && stack)
        st = put_known(g, pid, a->graph_exec ? BY_INSTANTIATE : BY_CAPTURE, a->graph, 0, stack);
    return st;
}

uint32_t exp_gpu_graph_captured(const exp_gpu_graph *g, int64_t pid, uint32_t graph)
{
    const known *e = graph ? find_known(g, pid, BY_EXEC, graph) : NULL;
    uint32_t gid = e && e->graph ? e->graph : graph;
    const known *k;

    if (!graph)
        return 0;
    if ((k = find_known(g, pid, BY_CAPTURE, gid)))
        return k->stack;
    if ((k = find_known(g, pid, BY_INSTANTIATE, gid)))
        return k->stack;
    return e ? e->stack : 0;
}

static uint64_t replay_hash(int64_t pid, uint32_t graph, uint32_t launch)
{
    return trch_hash_more_u64(trch_hash_u64((uint64_t)pid), ((uint64_t)graph << 32) | launch);
}

trc_status exp_gpu_graph_hit(exp_gpu_graph *g, const exp_gpu_hit *h)
{
    if (!h->graph)
        return TRC_OK;
    uint32_t launch = h->origin == EXP_GPU_PYTHON ? h->stack : 0;
    uint64_t hash = replay_hash(h->pid, h->graph, launch);
    replay *rp = NULL;
    trch_probe p;

    for (uint32_t i = trch_first(&g->replay_index, hash, &p); i != TRCH_NONE;
         i = trch_next(&g->replay_index, &p)) {
        replay *o = &g->replays[i];
        if (o->pid == h->pid && o->graph == h->graph && o->launch == launch) {
            rp = o;
            break;
        }
    }
    if (!rp) {
        if (g->n_replays >= UINT32_MAX - 1)
            return TRC_ERR_LIMIT;
        trc_status st = trcu_grow32(&g->replays, &g->cap_replays, g->n_replays, sizeof *g->replays);
        if (st == TRC_OK)
            st = trch_add(&g->replay_index, hash, g->n_replays);
        if (st != TRC_OK)
            return st;
        rp = &g->replays[g->n_replays++];
        *rp = (replay){ h->pid, h->graph, launch, 0, 0 };
    }
    rp->kernels++;
    rp->ns += h->dur_ns;
    return TRC_OK;
}

/* "train.py:42 (step)" of a stack's leaf frame, or `none`. */
static void put_line(FILE *out, const trc_reader *r, uint32_t stack, const char *none)
{
    const trc_stack *s = stack ? trc_reader_stack(r, stack) : NULL;
    const trc_frame *f = s ? trc_reader_frame(r, s->frame) : NULL;
    if (f)
        fprintf(out, "%s:%" PRIu32 " (%s)", f->file, f->line, f->function);
    else
        fputs(none, out);
}

void exp_gpu_graph_print(const exp_gpu_graph *g, const trc_reader *r, FILE *out)
{
    if (!g->n_replays)
        return;
    fputs("\nCUDA graphs: kernels of graph replays, with the line that launched the replay "
          "and the line that captured the graph\n",
          out);
    for (uint32_t i = 0; i < g->n_replays; i++) {
        const replay *rp = &g->replays[i];
        fprintf(out, "  graph %" PRIu32 " (pid %" PRId64 "): %" PRIu64 " kernels, %" PRIu64
                     ".%03" PRIu64 " ms, launched at ",
                rp->graph, rp->pid, rp->kernels, rp->ns / 1000000, rp->ns / 1000 % 1000);
        put_line(out, r, rp->launch, EXP_GPU_NO_PYTHON_ROOT);
        fputs(", captured at ", out);
        put_line(out, r, exp_gpu_graph_captured(g, rp->pid, rp->graph), "<unknown>");
        fputc('\n', out);
    }
}
