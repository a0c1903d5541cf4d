/*
 * startup.c — what every trc command does before anything else (called
 * by cli_parse; contract in cli.h "Start-up"):
 *
 *  - SIGXFSZ is ignored, so a write past `ulimit -f` fails with EFBIG and
 *    is reported like a full disk ("PATH: write failed: File too large")
 *    instead of killing the tool and leaving a temp file behind.  trec
 *    restores the default in the program it starts (lib/rec/spawn.c).
 *
 *  - Test hooks (tests/e2e/alloc_sweep.sh), read from the environment:
 *      TRC_TEST_FAIL_ALLOC=N    the Nth allocation (counting from here,
 *                               through lib/util/alloc.h) and every later
 *                               one fail: each failure path of a tool can
 *                               be walked from the command line;
 *      TRC_TEST_COUNT_ALLOCS=1  print "TOOL: allocations: N" to stderr at
 *                               exit, so a sweep knows the range of N.
 *    While either is set, libxml2 (the SVG timeline) allocates through
 *    the same wrapper, so its failures are counted and injected too.
 *    Unset, nothing changes.
 *    The hooks are in the released tools on purpose, not in a test
 *    build only: the sweep proves the failure paths (exit 2, one line,
 *    no half-written output) of the very binaries that are installed,
 *    which a second build would not, and they cost two getenv calls
 *    per run (the wrapper counts allocations in every build anyway; alloc.c).
 */
#include "tools/common/cli.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/alloc.h"

/* libxml2 is put on the wrapper by the SVG writer itself when it starts
 * (nvvp_sd_open), not here: only the tool that writes SVG links libxml2. */

static void print_count(void)
{
    fprintf(stderr, "%s: allocations: %ld\n", cli_program(), trc_alloc_count());
}

void cli_startup(void)
{
    static int done;
    if (done)
        return;
    done = 1;

    struct sigaction ign;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGXFSZ, &ign, NULL);

    const char *fail = getenv("TRC_TEST_FAIL_ALLOC");
    const char *count = getenv("TRC_TEST_COUNT_ALLOCS");
    int counting = count && *count && strcmp(count, "0") != 0;
    char *end = NULL;
    long n = fail && *fail ? strtol(fail, &end, 10) : -1;
    if (fail && *fail && (*end || n < 1))
        n = -1; /* a malformed value switches nothing on */
    if (n < 1 && !counting)
        return;
    if (counting)
        atexit(print_count);
    trc_alloc_fail_after(n); /* also starts the count from zero */
}
