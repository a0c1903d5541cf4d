/*
 * stopper.h — trec --blocking: stop a thread of the target while its
 * stack is read, with ptrace (design in stopper.c).
 *
 * Every function takes a NULL stopper and then does nothing (returns 0
 * or the "not stopped" answer), so callers need no test of their own.
 * Nothing here prints: refusals are kept for the session to report.
 */
#ifndef TRC_LIB_REC_STOPPER_H
#define TRC_LIB_REC_STOPPER_H

#include <stdint.h>
#include <sys/types.h>

struct rec_target;
struct rec_thread;

typedef struct rec_stopper rec_stopper;

/* NULL when out of memory. */
rec_stopper *rec_stopper_new(void);

/* Detaches what is left (rec_stopper_detach_all) and frees.  Exit
 * statuses still queued are lost: reap them first. */
void rec_stopper_free(rec_stopper *s);

/* Take thread tid of process pid under ptrace (PTRACE_SEIZE: it keeps
 * running).  0, or the errno of the refusal (EPERM: not allowed, or
 * another tracer holds it; ESRCH: no such thread). */
int rec_stopper_seize(rec_stopper *s, pid_t pid, pid_t tid);

/* Before a tick's thread list is read: stop every thread of t whose
 * stack will be read (not the quiet ones, nor those the kernel says are
 * blocked), so that the list's read, which fetches the stacks too, sees
 * them stopped.  Cannot fail: a thread that cannot be stopped is read
 * running, as without --blocking. */
void rec_stopper_hold(rec_stopper *s, struct rec_target *t);

/* Right before th's stack is read.  Returns 1 when th was not held from
 * before the list was read and has been stopped now: what the list's
 * read fetched of it was taken while it ran, so read its stack once more
 * (the second read fetches afresh).  0 otherwise. */
int rec_stopper_enter(rec_stopper *s, struct rec_target *t, struct rec_thread *th);

/* Right after th's stack was read: let it run again. */
void rec_stopper_leave(rec_stopper *s, pid_t tid);

/* Let every thread still held run again (end of a tick's reads). */
void rec_stopper_release(rec_stopper *s);

/* The scheduler state ('R' or 'S') tid had right before it was stopped
 * this tick, 0 when it was not stopped: once stopped and resumed, what
 * /proc says of it is the stop's doing. */
char rec_stopper_state(const rec_stopper *s, pid_t tid);

/* waitpid(which, WNOHANG) for the session (which: a pid or -1): answers
 * every ptrace stop of the threads under control on the way (passing
 * signals on, leaving job-control stops stopped) and swallows their
 * exits, except that of a thread-group leader.  Returns a pid with
 * *status set to its exit status, 0 when nothing more has ended, -1
 * (errno ECHILD) when there is nothing to wait for. */
pid_t rec_stopper_reap(rec_stopper *s, pid_t which, int *status);

/* Let go of every thread (PTRACE_DETACH needs a stopped thread: each is
 * stopped first, for up to a few ms).  Returns how many could not be
 * let go of yet (stuck in the kernel): call again later; the kernel lets
 * go of them when trec exits in any case.  Exits met are queued for
 * rec_stopper_reap. */
int rec_stopper_detach_all(rec_stopper *s);

/* A refusal to stop a process's threads not reported yet: 1 with *pid
 * and *err set (once per process), else 0. */
int rec_stopper_take_refusal(rec_stopper *s, pid_t *pid, int *err);

/* Threads stopped and stops that took longer than the wait allows
 * (for trec's self-timing line and the tests). */
typedef struct rec_stopper_stats {
    unsigned long long stops, slow, seized;
} rec_stopper_stats;
void rec_stopper_get_stats(const rec_stopper *s, rec_stopper_stats *out);

/* Test hook: wait up to ns for a stop before a read (default 2 ms). */
void rec_stopper_set_wait(rec_stopper *s, int64_t ns);

#endif /* TRC_LIB_REC_STOPPER_H */
