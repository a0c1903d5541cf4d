/*
 * stacks.c — turning a stack read by lib/py (leaf first) into a writer
 * stack id (a prefix tree, root to leaf: spec record 4, STACK).
 *
 * Two caches keep this cheap.  Frames: py_frame_info entries live for
 * the whole py_proc and are unique per (code object, line), so the
 * writer's frame id is kept in the entry's user_id and a frame is
 * interned once.  Stacks: consecutive samples of a thread share most of
 * their root side, so each thread remembers its last stack (frame
 * pointers and stack ids, root first) and only frames past the common
 * prefix go to trc_writer_stack.  A 500-frame recursion that moves one
 * line costs one call, not 500.
 *
 * A stack deeper than the format allows arrives with a synthetic root
 * frame (rec_truncated_name, see rec_int.h), written with kind "other"
 * (spec record 3) so no reader takes it for Python code.
 *
 * A thread without a Python thread state (a pool started from C) has a
 * one-frame stack that says what it is, "[native thread NAME]", also of
 * kind "other": a synthetic thread root, under which native frames could
 * one day go.
 */
#include "lib/rec/rec_int.h"

#include "lib/util/alloc.h"
#include "lib/util/grow.h"

#include <stdio.h>
#include <string.h>

void rec_stackcache_cleanup(rec_stackcache *c)
{
    trc_free(c->frames);
    trc_free(c->ids);
    memset(c, 0, sizeof *c);
}

static int reserve(rec_stackcache *c, int depth)
{
    if (depth <= c->cap)
        return 0;
    /* Two columns of one capacity, which moves once both have grown.
     * depth counts frames the walker holds in memory, so its doubled
     * capacity fits an int. */
    size_t cap_f = (size_t)c->cap, cap_ids = (size_t)c->cap;
    if (trcu_grow((void **)&c->frames, &cap_f, (size_t)depth - 1, sizeof *c->frames) != TRC_OK ||
        trcu_grow((void **)&c->ids, &cap_ids, (size_t)depth - 1, sizeof *c->ids) != TRC_OK)
        return -1;
    c->cap = (int)cap_f;
    return 0;
}

const char rec_truncated_name[] = "<truncated>";

static trc_status frame_id(trc_writer *w, const py_frame_info *f, uint32_t *id)
{
    if (f->user_id) {
        *id = f->user_id;
        return TRC_OK;
    }
    trc_frame_kind kind = f->function == rec_truncated_name ? TRC_FRAME_OTHER : TRC_FRAME_PYTHON;
    trc_status st = trc_writer_frame(w, kind, f->function ? f->function : "",
                                     f->file ? f->file : "", f->line, f->first_line, id);
    if (st == TRC_OK)
        ((py_frame_info *)f)->user_id = *id; /* user_id is the caller's by contract */
    return st;
}

trc_status rec_stack_intern(trc_writer *w, rec_stackcache *c, const py_frame_info **frames,
                            int depth, uint32_t *stack)
{
    *stack = 0;
    if (depth <= 0) {
        c->depth = 0;
        return TRC_OK;
    }
    if (reserve(c, depth) != 0) {
        c->depth = 0;
        return TRC_ERR_NOMEM;
    }
    int common = 0;
    while (common < depth && common < c->depth && c->frames[common] == frames[depth - 1 - common])
        common++;
    uint32_t parent = common ? c->ids[common - 1] : 0;
    for (int i = common; i < depth; i++) {
        const py_frame_info *f = frames[depth - 1 - i];
        uint32_t fid, sid;
        trc_status st = frame_id(w, f, &fid);
        if (st == TRC_OK)
            st = trc_writer_stack(w, parent, fid, &sid);
        if (st != TRC_OK) {
            c->depth = i; /* what is cached so far is still right */
            return st;
        }
        c->frames[i] = f;
        c->ids[i] = sid;
        parent = sid;
    }
    c->depth = depth;
    *stack = parent;
    return TRC_OK;
}

trc_status rec_native_stack(trc_writer *w, const char *name, uint32_t *stack)
{
    char fn[300];
    uint32_t fid;
    snprintf(fn, sizeof fn, "[native thread %s]", name);
    trc_status st = trc_writer_frame(w, TRC_FRAME_OTHER, fn, "", 0, 0, &fid);
    return st == TRC_OK ? trc_writer_stack(w, 0, fid, stack) : st;
}
