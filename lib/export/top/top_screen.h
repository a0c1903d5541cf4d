/*
 * lib/export/top/top_screen.h — trc-top's full-screen view (ncurses;
 * docs/top.md): redrawn ten times a second, one key per sort column and
 * per toggle (top_key_help), q or an interrupt to leave with the
 * terminal as it was.  The only file of trc that uses ncurses, linked
 * into trc-top alone (mk/top.mk).  Internal API, prefix top_screen_.
 */
#ifndef TRC_LIB_EXPORT_TOP_TOP_SCREEN_H
#define TRC_LIB_EXPORT_TOP_TOP_SCREEN_H

#include <signal.h>

#include "lib/export/top/top.h"
#include "lib/export/top/top_format.h"

/* The input's state line for the header, asked before each redraw. */
typedef const char *(*top_status_fn)(void *arg);

/* Run the screen over m until q is pressed or *interrupted becomes
 * non-zero (a signal handler's flag); v is updated by the keys.
 * Returns 0, or -1 when the terminal cannot be set up (why filled, the
 * terminal untouched) or out of memory (why filled, terminal restored). */
int top_screen_run(top_model *m, top_view *v, top_context *c, top_status_fn status, void *arg,
                   volatile sig_atomic_t *interrupted, char *why, size_t n);

#endif /* TRC_LIB_EXPORT_TOP_TOP_SCREEN_H */
