/*
 * py_mem.h — reading another process's memory (process_vm_readv) or our
 * own (memcpy after checking the range against a snapshot of
 * /proc/self/maps), behind one interface so the frame walker is shared
 * between trec's sampler and the in-process CUPTI injection.
 *
 * Neither reader ever faults: a remote read of a bad address fails with
 * EFAULT; a local read of an address outside every readable mapping
 * fails the same way without touching it, and so does one of a page
 * unmapped since the snapshot (each page is checked once per sample).
 */
#ifndef TRC_LIB_PY_MEM_H
#define TRC_LIB_PY_MEM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

typedef struct pymem_range {
    uint64_t start, end;
} pymem_range;

typedef struct pymem {
    pid_t pid;              /* target; our own pid when local */
    int local;              /* 1: memcpy reader */
    pymem_range *ranges;    /* local: sorted readable mappings */
    size_t nranges;
    uint64_t refreshed_ns;  /* local: when ranges were last read */
    uint64_t epoch, refreshed_epoch; /* local: one forced refresh per sample */
    int vm_blocked;         /* local: process_vm_readv on ourselves refused */
    int mincore_blocked;    /* local: mincore refused (seccomp): pages are probed by reading */
    uint64_t live_page[64]; /* local: pages seen mapped in this sample (page number + 1; 0 = none) */
    uint64_t live_epoch[64];/* local: the sample each live_page entry was checked in */
    int careful;            /* local: read by system call even inside the snapshot
                             * (memory that may be freed under us) */
    int pipe_fd[2];         /* local, vm_blocked: the pipe reads go through */
    pid_t pipe_pid;         /* the process that made it; 0 = none yet */
    uint64_t reads, bytes;  /* statistics: read calls and bytes copied */
    uint64_t pages;         /* statistics: target pages those reads touched (the VM's cost unit) */
} pymem;

/* Remote reader for pid.  Cannot fail. */
void pymem_init_remote(pymem *m, pid_t pid);

/* Local reader: snapshots /proc/self/maps.  Returns 0, or -1 with errno
 * (ENOMEM, or the error opening maps). */
int pymem_init_local(pymem *m);

void pymem_cleanup(pymem *m);

/* Reads remote[i] into local[i] for i < n (n <= 1024).  Returns how many
 * leading elements were read completely (0..n; fewer than n when
 * element [return] has a bad address), or -1 with errno set when the
 * read is impossible as a whole: EPERM (not allowed), ESRCH (process
 * gone), or another errno. */
int pymem_readv(pymem *m, const struct iovec *local, const struct iovec *remote, int n);

/* One range: 0 on success, -1 with errno (EFAULT for a bad address). */
int pymem_read(pymem *m, uint64_t addr, void *buf, size_t len);

/* A new sample starts (limits the local reader's map refreshes).
 * Cannot fail. */
static inline void pymem_new_sample(pymem *m)
{
    m->epoch++;
}

/* Current monotonic time in ns (shared helper). */
uint64_t pymem_now_ns(void);

#endif
