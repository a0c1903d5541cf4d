/*
 * lib/export/chrome/chrome_gpu_int.h — state shared by the GPU half of the
 * Chrome exporter, private to lib/export/chrome_gpu*.c:
 *   chrome_gpu.c        events in, track names out (the chr_gpu_* API);
 *   chrome_gpu_tracks.c tracks, their lanes and the reorder window;
 *   chrome_gpu_flows.c  launch -> activity flows and releasing slices;
 *   chrome_gpu_write.c  one slice as a JSON "X" event with its args;
 *   chrome_gpu_syncs.c  arrows from the work a blocking sync waited for.
 * The design (tracks, nesting, flows) is explained atop chrome_gpu.c.
 */
#ifndef TRC_LIB_EXPORT_CHROME_GPU_INT_H
#define TRC_LIB_EXPORT_CHROME_GPU_INT_H

#include "lib/export/chrome/chrome_int.h"
#include "lib/export/common/gpu_graph.h"
#include "lib/export/common/gpu_sync.h"
#include "lib/util/hashtab.h"
#include "lib/util/spill.h"

enum { TK_STREAM, TK_SYNC, TK_API, TK_MARKS };

/* A slice's part in a flow: the launch call, or the activity. */
enum { ROLE_NONE, ROLE_OUT, ROLE_IN };

#define WINDOW 64       /* slices held back per track for reordering */
#define WINDOW_CAP 128  /* the window's ring: a power of two above WINDOW */
#define WAIT_MAX 65536  /* slices waiting for a flow partner, at most */
#define WAIT_MEM 4096   /* of them in memory by default (wait_mem) */
#define MAX_LANES 64
#define NO_STREAM UINT32_MAX

typedef struct gslice {
    int64_t start, end;
    uint64_t seq;        /* arrival order: ties keep it */
    trc_event_type type;
    union {
        trc_gpu_kernel k;
        trc_gpu_memcpy m;
        trc_gpu_memset s;
        trc_gpu_sync y;
        trc_api_call a;
        trc_marker mk;
    } u;
} gslice;

typedef struct lane {
    int64_t tid;
    char ids[64];        /* "pid":P,"tid":T, of its slices, built once */
    uint32_t ids_len;
    int64_t base_ns;     /* its first slice's start: speedscope's zero */
    int has_base;
    int64_t last_start;
    struct lopen {       /* the slices open at last_start, outermost first */
        int64_t end;
        int launch;      /* a launch API call */
    } *open;
    uint32_t depth, cap;
} lane;

typedef struct pushed {  /* an open PUSH marker */
    trc_marker m;
} pushed;

typedef struct gtrack {
    uint32_t kind;       /* TK_* */
    int64_t pid;         /* pid of its events */
    int64_t owner;       /* the process whose work it shows */
    uint32_t device, context, stream; /* TK_STREAM, TK_SYNC */
    uint32_t thread;     /* TK_API, TK_MARKS: reader thread id, 0 = process-wide */
    char where[112];     /* TK_STREAM, TK_SYNC: ,"process":..."stream":S of its
                          * slices' args (the track's key), built once */
    uint32_t where_len;
    struct hent {        /* reorder window: a ring in release order */
        int64_t start, end;
        uint64_t seq;
        uint32_t slot;   /* the slice: pool[slot] */
    } *win;              /* WINDOW_CAP entries, allocated on first use */
    uint32_t win_first, n_win;
    gslice *pool;        /* the window's slices (moving them costs more than indices) */
    uint32_t n_pool, cap_pool;
    uint32_t *free_slots;
    uint32_t n_free, cap_free;
    lane *lanes;
    uint32_t n_lanes, cap_lanes;
    pushed *push;
    uint32_t n_push, cap_push;
} gtrack;

typedef struct waiter {  /* a placed slice waiting for its flow partner */
    gslice s;
    uint32_t track, lane;
    uint64_t key;        /* (owner pid, correlation), see chrome_gpu_flows.c */
    int done;
} waiter;

typedef struct wspilled {  /* a waiter moved to the temporary file */
    uint64_t key;
    int64_t off;
    int done;
} wspilled;

typedef struct chg_head {  /* {"ph":"X","name":"NAME","cat":"CAT", */
    const char *name, *cat; /* reader-owned or static, compared by address */
    char *text;
    uint32_t len;
} chg_head;

typedef struct chg_sync_flow {  /* a blocking sync and the last work it waited for */
    int64_t pid;
    uint32_t thread;
    int64_t at;          /* inside the sync's API slice */
    int64_t from;        /* inside the activity's slice */
    trc_gpu_where where; /* the activity's */
} chg_sync_flow;

typedef struct chg_site {  /* ,"call_site":"function (file:line)" */
    char *text;          /* NULL: not built yet */
    uint32_t len;
} chg_site;

struct chr_gpu {
    gtrack *tracks;      /* in order of creation */
    uint32_t n_tracks, cap_tracks;
    trch_index track_index; /* track key -> index */
    uint32_t last_track[4]; /* by kind: the track found last (runs of
                             * events go to one track: no hashing) */
    uint32_t *devices;   /* GPU devices shown, in order of first use */
    uint32_t n_devices, cap_devices;
    waiter *wait;        /* in order of placing */
    uint32_t n_wait, cap_wait, n_done;
    uint32_t oldest;     /* no waiter before this index is still waiting */
    trch_index wait_index; /* waiter key -> index of a waiter not done */
    wspilled *sp;        /* waiters older than those in memory, in order */
    uint32_t n_sp, cap_sp, sp_done;
    uint32_t sp_oldest;  /* no spilled waiter before this is still waiting */
    trch_index sp_index; /* key -> index in sp of one not done */
    trcu_spill sp_file;  /* the spilled waiters, empty until needed */
    uint32_t wait_mem;   /* waiters kept in memory at most */
    uint64_t seq, n_flows;
    int64_t next_tid;
    chg_head *heads;     /* slice heads by (name, cat) */
    uint32_t n_heads, cap_heads;
    trch_index head_index; /* by the strings' addresses */
    chg_site *site;      /* by reader stack id */
    uint32_t cap_site;
    exp_gpu_sync *syncs; /* blocking syncs (chrome_gpu_syncs.c) */
    chg_sync_flow *sync_flows; /* drawn at the end, once every slice has its lane */
    size_t n_sync_flows, cap_sync_flows;
    trc_status sync_st;  /* the stage's first failure */
    exp_gpu_graph *graphs; /* where CUDA graphs were captured; NULL until one is */
};

/* ---- across the chrome_gpu*.c files (prefix chg_) ---- */

/* Put s on a lane of t; returns the lane index or -1 when out of memory.
 * *in_launch: s lies inside a launch API call (the driver call a runtime
 * launch makes). */
int64_t chg_place(chr_gpu *g, gtrack *t, const gslice *s, int *in_launch);

/* Put x in its place in t's window (allocated, fewer than WINDOW_CAP
 * entries).  Cannot fail. */
void chg_window_add(gtrack *t, const struct hent *x);

/* Remove the first entry of t's window (not empty); returns its slice's
 * pool slot, which the caller frees once done with the slice. */
uint32_t chg_window_pop(gtrack *t);

/* Release the first slice of track ti's window (not empty) and free its
 * slot.  What chg_release returns. */
trc_status chg_release_first(chrome *c, const trc_reader *r, uint32_t ti);

/* The track with this key, created on first use; its index, or -1 when
 * out of memory or the device has no pseudo-process (c->err and
 * c->err_st set, chr_gpu_pid). */
int64_t chg_get_track(chrome *c, uint32_t kind, int64_t owner, uint32_t device,
                      uint32_t context, uint32_t stream, uint32_t thread);

/* Add a lane to t; its index, or -1 when out of memory.  start is the
 * first slice's, or INT64_MIN for a lane opened by an instant. */
int64_t chg_new_lane(chr_gpu *g, gtrack *t, int64_t start);

/* Queue s on track ti; the window's first slice leaves when it is full. */
trc_status chg_add_slice(chrome *c, const trc_reader *r, int64_t ti, gslice *s);

/* A slice leaves its track's window: place it and write it (or let it
 * wait for its flow partner). */
trc_status chg_release(chrome *c, const trc_reader *r, uint32_t ti, const gslice *s);

/* At the end: write the slices still waiting for a partner, unlinked,
 * in order of placing, and forget them.  TRC_OK, TRC_ERR_NOMEM or
 * TRC_ERR_IO (the temporary file; c->err set). */
trc_status chg_flush_waiters(chrome *c, const trc_reader *r);

/* {"ph":"X" ... } of slice s on lane li of track ti; bind != 0 adds its
 * flow end.  TRC_OK or TRC_ERR_NOMEM (c->err set). */
trc_status chg_write_gslice(chrome *c, const trc_reader *r, uint32_t ti, uint32_t li,
                            const gslice *s, uint64_t bind, int role);

/* Blocking syncs (chrome_gpu_syncs.c): feed every GPU/API event; at the
 * end, after every slice is written, a v1 flow from the last GPU work
 * each sync waited for to the sync's API slice.  TRC_OK, TRC_ERR_NOMEM. */
trc_status chg_sync_event(chrome *c, const trc_reader *r, const trc_event *ev);
trc_status chg_sync_flows(chrome *c, const trc_reader *r);
void chg_sync_free(chr_gpu *g);

/* Helpers of the slice writer, also used for instants.  Cannot fail. */
void chg_write_i64_arg(jsonw *w, const char *key, int64_t v);
void chg_write_marker_args(jsonw *w, const trc_marker *m);

#endif /* TRC_LIB_EXPORT_CHROME_GPU_INT_H */
