/*
 * py_internal.h — the py_proc handle and the interfaces between the
 * files of lib/py/ (attach, code cache, walker, tid inference).  Not
 * for users: they include lib/py/pyproc.h.
 */
#ifndef TRC_LIB_PY_INTERNAL_H
#define TRC_LIB_PY_INTERNAL_H

#include "lib/py/pyproc.h"
#include "lib/py/py_layout.h"
#include "lib/py/py_lines.h"
#include "lib/py/py_mem.h"
#include "lib/py/py_snap.h"
#include "lib/util/arena.h"
#include "lib/util/hashtab.h"
#include "lib/util/intern.h"

#include <pthread.h>
#include <stdint.h>

/* ---- code cache (py_code.c) ---------------------------------------- */

typedef struct pyline_info {
    uint32_t line;
    py_frame_info *fi;
} pyline_info;

typedef struct pycode {
    uint64_t addr;
    /* fields compared on every hit, read from the code object */
    uint64_t v_type, v_file, v_name, v_lines;
    int64_t v_size;
    int32_t v_first;
    uint32_t v_version;            /* co_version (3.12+), 0 = none */
    /* and, without a version, what the name and file strings hold
     * (py_code.c, "Reuse"):
     * span bytes from the object's start cover its characters (0 = the
     * string could not be fingerprinted: pointers only); fp hashes them */
    uint32_t s_span[2];            /* [0] name, [1] file */
    uint64_t s_fp[2];
    const char *function, *file;   /* interned, in the arena */
    py_lineent *map;
    uint32_t nmap;
    pyline_info *lines;            /* sorted by line */
    uint32_t nlines;
    size_t caplines;
    int64_t last_addrq;            /* most frames sit where they sat last time */
    const py_frame_info *last_fi;
} pycode;

typedef struct pycode_cache {
    pycode **code;       /* entries, in the order they were made */
    size_t count, cap;
    trch_index index;    /* code object address -> code[] */
    trci_map str;        /* interned names and file names (keys in p->arena;
                          * a key's value is its index in str.ents) */
    uint64_t gen;        /* bumped whenever an entry is freed: a pycode
                          * pointer kept elsewhere is alive while the
                          * generation it was taken in lasts */
    const struct pycode *last;   /* entry of the last successful resolve */
} pycode_cache;

/* ---- per-thread read plans (what the last sample touched) ---------- */

#define PYMEMO_FRAMES 128
#define PYMEMO_CODES 64
#define PY_FR_HELD 160     /* ≤3.10: bytes of a frame object compared (fr_len is less) */
#define PYMEMO_LEAVES 8   /* ≤3.10: newest frames planned next to the thread state */

/* How one depth of a thread's stack was resolved last time, so that a
 * frame still at the same place with the same code and instruction is
 * not resolved again (py_walk.c's emit).  c is valid while gen ==
 * p->cc.gen; fi is what pycode_resolve gave for (c, instr). */
typedef struct pyrs {
    uint64_t frame, code, instr, gen;
    const struct pycode *c;
    const py_frame_info *fi;
} pyrs;

typedef struct pymemo {
    uint64_t tstate;
    uint64_t bottom;                    /* outermost frame of the last good stack */
    uint64_t cframe;                    /* 3.11–3.12 */
    uint64_t chunk, chunk_end, lo, hi;  /* 3.11+: frame window in the chunk */
    int idle;                           /* py_proc_set_idle: plan no stack read */
    /* ≤3.10: the newest frames of the last reads, good or torn, the
     * latest last (py_plan.c plans them apart, next to the thread state) */
    uint64_t leaves[PYMEMO_LEAVES];
    int nleaves;
    /* ≤3.10: the last torn read's newest frame when it was referenced
     * but not running, and its bytes (py_walk.c: read alike twice, it
     * is a frame caught returning or resuming, not a stale copy) */
    uint64_t held;
    uint8_t held_bytes[PY_FR_HELD];
    uint64_t frames[PYMEMO_FRAMES];     /* ≤3.10: frame object addresses */
    uint64_t codes[PYMEMO_CODES];
    int nframes, ncodes;
    pyrs *rs;                           /* PYMEMO_FRAMES entries, made on first use; owned */
} pymemo;

#define PY_TORN_TRIES 3  /* reads of a thread list before calling it unreadable */
#define PY_STACK_TRIES 5 /* reads of a stack before calling it torn (each learns from the last) */
#define PYLIST_MAX 512   /* thread-list addresses remembered between calls */

/* Interpreters remembered between calls (each thread state must name
 * one of them).  CPython sets no limit; past this many the rest are
 * still listed, but their threads' interpreter is not checked
 * (interp_more, counted in py_proc_stats.interp_unchecked). */
#define PYLIST_INTERPS 256

/* Not a limit of CPython's (each interpreter state is some 200 KiB):
 * an interpreter list longer than this is taken for a cycle read from
 * memory being rewritten, and the read is retried. */
#define PY_INTERPS_MAX 4096

typedef struct pylist_memo {
    uint64_t interp[PYLIST_INTERPS];
    int ninterp;
    int interp_more;             /* more interpreters than interp[] holds */
    uint64_t gil[PYLIST_INTERPS];   /* distinct GIL states (one per interpreter at most) */
    int ngil;
    uint64_t tstate[PYLIST_MAX];
    uint64_t pthread[PYLIST_MAX];
    uint64_t tsid[PYLIST_MAX];   /* ≤3.10: the thread state's unique id */
    int64_t tid[PYLIST_MAX];     /* ≤3.10: its kernel tid as last read, -1 unknown */
    int ntstate;
    uint64_t full_ns;    /* when the list was last read from the runtime down */
} pylist_memo;

/* ---- free-threaded bytecode copies (py_walk.c) ---------------------- */

/* Where a code object's per-thread bytecode copy (co_tlbc->entries[i],
 * i > 0) was found, so that frames running in it need no read of the
 * copy table: direct-mapped on (code, index). */
#define PYTLBC_SLOTS 256

typedef struct pytlbc {
    uint64_t code, start;
    int32_t index;
} pytlbc;

/* ---- the handle ------------------------------------------------------ */

#define PY_TS_MAX 1024   /* bytes of a thread state we read (checked at attach) */

struct py_proc {
    pid_t pid;
    int self;                  /* attached to the calling process */
    char version[32];
    char layout_source[128];   /* py_proc_layout_source */
    int ft_gil;                /* free-threaded: GIL 1 on, 0 off, -1 not read (the words say it) */
    int ft_gil_now;            /* the same at the last read (py_proc_no_gil) */
    int ft_gil_next;           /* another state seen since ft_gil_since_ns, + 1; 0 none */
    uint64_t ft_gil_since_ns;
    unsigned layout_changes;   /* py_proc_layout_changes */
    py_layout L;
    uint64_t runtime;          /* &_PyRuntime in the target */
    uint64_t code_type, unicode_type, bytes_type, frame_type;  /* type objects */
    uint64_t dict_type, module_type, long_type;                /* (thread names) */
    uint64_t none_type, bool_type, float_type, tuple_type, list_type; /* (locals) */
    uint64_t cell_type;  /* (locals: a closure's variables, shown by what they hold) */
    pymem mem;
    pysnap snap;
    pthread_mutex_t lock;      /* the self-attached handle is shared by threads */

    /* read spans derived from the layout; the interpreter span covers
     * next and the thread list head, ceval.gil is read on its own */
    uint32_t rt_lo, rt_len, is_lo, is_len, ts_len, fr_len, co_len, gil_lo, gil_len;

    trca_arena arena;          /* names and py_frame_info, until py_proc_free */
    pycode_cache cc;
    pymemo *memo;              /* one per thread state, found through memo_index */
    size_t memocap, memocount;
    trch_index memo_index;     /* tstate -> memo[] */
    pylist_memo lm;
    pytlbc *tlbc;              /* PYTLBC_SLOTS entries, made on first use; owned */
    uint64_t tick_ns;          /* when py_proc_threads last fetched, stacks included */
    int tick_valid;            /* p->snap still holds that fetch */
    uint64_t tick_used[64];    /* stacks already served from it: once each */
    int ntick_used;
    uint64_t list_refresh_ns;  /* py_threads.c: longest trust in a known list (test hook) */

    int64_t tid_off;           /* ≤3.10: offset of the kernel tid in struct pthread, -1 unknown */
    uint64_t tid_retry_ns, tid_retry_gap_ns; /* pytid_recalibrate: when to look for tid_off again */
    uint64_t id;               /* unique per handle: keys the per-thread cache */

    char name[256];            /* py_proc_thread_name result */
    struct pynames *names;     /* py_names.c's cache, made on first use */
    py_proc_stats stats;
    py_status last;            /* reason for the last -1 */
};

/* Code object at addr, header bytes hdr (p->co_len of them, already
 * read), at byte offset addrq into its bytecode (negative: not started;
 * INT64_MIN: unknown) -> its frame info.  NULL with p->last set when the
 * object is not a valid code object or cannot be read. */
const py_frame_info *pycode_resolve(py_proc *p, uint64_t addr, const uint8_t *hdr, int64_t addrq);

/* The cache entry pycode_resolve used last (for pyrs).  Borrowed, valid
 * while p->cc.gen is unchanged. */
const struct pycode *pycode_last(const py_proc *p);

/* 1 if hdr (p->co_len bytes of the code object at c->addr, read in this
 * sample) is still the code object c was decoded from: the same check a
 * cache hit makes.  May read the name and file strings on demand, which
 * can move the snapshot's buffer: hdr is not valid afterwards.  0 also
 * when they cannot be read. */
int pycode_still(py_proc *p, const struct pycode *c, const uint8_t *hdr);

/* Plans (pysnap_plan) the string ranges a hit on the cache entry of the
 * code object at addr will check, if there is such an entry.  Cannot
 * fail. */
void pycode_plan(py_proc *p, uint64_t addr);

/* Number of 2-byte code units of the code object whose header is hdr
 * (3.11+), for bounds checks; 0 if unknown. */
int64_t pycode_units(const py_proc *p, const uint8_t *hdr);

void pycode_cache_free(pycode_cache *c);

/* Reads a str object as UTF-8 into buf (NUL-terminated, truncated at
 * cap-1 bytes at a character boundary).  0, or -1 if addr is not a
 * readable str. */
int pystr_read(py_proc *p, uint64_t addr, char *buf, size_t cap);

/* ≤3.10: finds p->tid_off (see py_tid.c) from a fresh thread list
 * (py_tick.c).  Cannot fail (leaves -1). */
void pytid_calibrate(py_proc *p);
void pytid_recalibrate(py_proc *p);   /* when due, while tid_off is unknown */

/* Threads a calibration looks at. */
#define PYTID_MAX_THREADS 64

/* py_tid.c: sets p->tid_off from the threads ti[0..n) (n < 0: none
 * could be listed), or -1 when no offset fits them.  Cannot fail. */
void pytid_search(py_proc *p, const py_thread_info *ti, int n);

/* Kernel tid of the calling thread. */
int64_t pytid_self(void);

/* Frees p->names (py_names.c).  Safe when never made. */
void pynames_free(py_proc *p);

/* Maps an errno from a read to a status. */
py_status py_status_from_errno(int e);

/* (Re)writes p->layout_source (py_attach.c; spec §7.5): where the
 * layout came from and, for a free-threaded build, its GIL state ft_gil
 * (1 on, 0 off, -1 not known), kept in p->ft_gil; bumps
 * p->layout_changes. */
void py_layout_words(py_proc *p, int ft_gil);

/* Sets p->last and returns -1: how every stage fails. */
static inline int py_fail(py_proc *p, py_status st)
{
    p->last = st;
    return -1;
}

/* The status of a failed snapshot read (hard errors keep their cause). */
static inline py_status py_snap_status(const py_proc *p)
{
    return p->snap.hard_errno ? py_status_from_errno(p->snap.hard_errno) : PY_ERR_IO;
}

/* py_threads.c: one read of the thread list (py_proc_threads without
 * its retries); the caller holds p->lock. */
int pythreads_list_locked(py_proc *p, py_thread_info *out, int max, int want_gil);

/* For tests (tests/unit/py/test_py_image.c): a synthetic process image
 * laid out in the calling process's memory, read through the same local
 * memory reader as py_proc_attach_self, with layout L instead of one
 * found from an interpreter's symbols and version; the type objects are
 * the addresses the image's objects name.  Attach checks as for a live
 * process.  Same return convention as py_proc_attach. */
typedef struct py_image {
    const py_layout *L;
    uint64_t runtime, code_type, unicode_type, bytes_type;
    uint64_t dict_type, module_type, long_type;   /* 0: none (no thread names) */
} py_image;
py_status py_proc_attach_image(const py_image *img, py_proc **out, char *err, size_t errlen);


/* ---- why reading a process was refused (py_perm.c) ----------------- */

typedef struct py_perm_facts {
    pid_t pid;
    uid_t euid;              /* trec's effective user */
    int cap_ptrace;          /* trec has CAP_SYS_PTRACE in its effective set */
    int yama;                /* kernel.yama.ptrace_scope, -1 = no Yama */
    long target_uid;         /* the target's effective user, -1 = unknown */
    int target_more_caps;    /* the target holds capabilities trec lacks */
    int other_userns;        /* the target's user namespace is known to differ */
    char command[160];       /* its command line ("" = unknown) */
} py_perm_facts;

/* What /proc says about trec and process pid. */
void py_perm_facts_read(pid_t pid, py_perm_facts *f);
/* One line (no newline): which rule refused and the fix that applies. */
void py_perm_explain(const py_perm_facts *f, char *err, size_t n);

#endif
