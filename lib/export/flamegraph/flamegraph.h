/*
 * lib/export/flamegraph/flamegraph.h — trc2flamegraph's engine: a
 * self-contained interactive SVG flame graph (docs/design/outputs.md,
 * "Flame graph SVG") of the folded stacks that trc2collapsed writes
 * (lib/export/common/collapsed.h, the same roots, names and weights).
 *
 * The stacks become a tree (flame_tree.c): one node per distinct path
 * from the root, children in byte order of their names, a frame's width
 * its value over the total, as flamegraph.pl draws them; frames narrower
 * than min_width pixels are not drawn, so their time shows as part of
 * their parent, and the file stays small however many stacks there are.
 * Memory is bounded by the distinct stacks, never by the samples.
 * flame_svg.c writes the SVG, flame_script.c is the viewer embedded in
 * it (zoom, search, tooltips).  Internal API, prefix exp_flame_.
 */
#ifndef TRC_LIB_EXPORT_FLAMEGRAPH_FLAMEGRAPH_H
#define TRC_LIB_EXPORT_FLAMEGRAPH_FLAMEGRAPH_H

#include <stdint.h>
#include <stdio.h>

#include "trc/trc.h"
#include "lib/export/common/collapsed.h"
#include "lib/export/sink.h"

/* What a frame is, for its colour. */
typedef enum exp_flame_kind {
    EXP_FLAME_PYTHON = 0,   /* "function (file:line)" */
    EXP_FLAME_NATIVE,       /* a name without a source file */
    EXP_FLAME_GPU,          /* a GPU activity (--gpu leaves) */
    EXP_FLAME_IDLE,         /* most of its time off-CPU (--idle samples) */
    EXP_FLAME_OTHER         /* synthetic: "<...>", --threads/--pids roots, "all" */
} exp_flame_kind;

typedef struct exp_flame_node {
    uint32_t name;          /* offset of the display name in the tree's text */
    uint32_t parent;        /* node index; the root "all" is node 0, its own parent */
    uint32_t child0, nchild;/* its children: children[child0 .. child0+nchild) */
    uint32_t depth;         /* 0 for the root */
    uint8_t kind;           /* exp_flame_kind */
    uint64_t value;         /* the weight of the stacks through this frame */
    uint64_t count, ns;     /* their samples (activities) and sampled ns */
    uint64_t idle;          /* the part of value from off-CPU samples */
} exp_flame_node;

typedef struct exp_flame_tree exp_flame_tree;

/* An empty tree.  NULL when out of memory. */
exp_flame_tree *exp_flame_tree_new(void);
void exp_flame_tree_free(exp_flame_tree *t);

/* Add one folded line ("a;b;c" as collapsed.h writes it, names
 * %XX-escaped) of weight value.  roots: how many leading frames are
 * --pids/--threads roots; gpu_leaf: the last frame is a GPU activity;
 * idle: the samples were off-CPU.  TRC_OK, TRC_ERR_NOMEM or
 * TRC_ERR_LIMIT (more than UINT32_MAX nodes or text). */
trc_status exp_flame_tree_add(exp_flame_tree *t, const char *stack, uint64_t value,
                              uint64_t count, uint64_t ns, int roots, int gpu_leaf, int idle);

/* Order every node's children by name (byte order) and set child0 and
 * nchild.  Call once after the last add.  TRC_OK or TRC_ERR_NOMEM. */
trc_status exp_flame_tree_finish(exp_flame_tree *t);

/* After finish: the nodes (node 0 is the root "all", its value the
 * total), the children index, the names. */
uint32_t exp_flame_tree_size(const exp_flame_tree *t);
const exp_flame_node *exp_flame_tree_node(const exp_flame_tree *t, uint32_t i);
uint32_t exp_flame_tree_child(const exp_flame_tree *t, uint32_t i);
const char *exp_flame_tree_name(const exp_flame_tree *t, const exp_flame_node *n);
/* The child of node i named name, or UINT32_MAX. */
uint32_t exp_flame_tree_find(const exp_flame_tree *t, uint32_t i, const char *name);

typedef struct exp_flame_options {
    exp_collapsed_options fold; /* roots, names and weight, as trc2collapsed */
    int icicle;                 /* root at the top */
    const char *title;          /* NULL: "Flame Graph" / "Icicle Graph" */
    const char *subtitle;       /* NULL: none */
    double width;               /* image width in px (<= 0: 1200) */
    double min_width;           /* px; frames narrower are not drawn (< 0: 0.1) */
    const exp_flame_tree *base; /* --diff: BASE's finished tree, else NULL */
    const char *base_name;      /* BASE as the tooltips name it */
    exp_flame_tree *collect;    /* set: finish fills this tree and writes nothing */
    const exp_gpu_idle_options *gpu_idle; /* exp_sink_flamegraph_gpu_idle's window */
    int calls;                  /* the counts are API calls (--syncs), not samples */
} exp_flame_options;

/* Write the SVG of finished tree t (opts as above; opts->fold.weight_us
 * says whether values are us or samples; gpu: values of GPU activities).
 * TRC_OK, TRC_ERR_NOMEM or TRC_ERR_IO (errno kept). */
trc_status exp_flame_svg_write(const exp_flame_tree *t, const exp_flame_options *opts, int gpu,
                               FILE *out);

/* The viewer the SVG embeds (flame_script.c): CSS and JavaScript. */
extern const char exp_flame_css[];
extern const char exp_flame_js[];

/* Sinks (flame_sink.c): samples, or (_gpu) GPU activities charged to
 * their launch sites; options exp_flame_options. */
extern const exp_sink_type exp_sink_flamegraph;
extern const exp_sink_type exp_sink_flamegraph_gpu;
/* GPU idle time by the feeding threads' stacks (--gpu-idle): the lines
 * of exp_collapsed_add_gpu_idle; options exp_flame_options with
 * gpu_idle set (NULL: the whole recording). */
extern const exp_sink_type exp_sink_flamegraph_gpu_idle;
/* Blocking syncs (--syncs): the lines of exp_collapsed_add_sync, the
 * calling stacks weighted by host time blocked (or calls); options
 * exp_flame_options. */
extern const exp_sink_type exp_sink_flamegraph_syncs;

#endif /* TRC_LIB_EXPORT_FLAMEGRAPH_FLAMEGRAPH_H */
