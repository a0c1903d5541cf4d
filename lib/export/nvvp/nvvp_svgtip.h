/*
 * lib/export/nvvp/nvvp_svgtip.h — tooltip texts for the SVG timeline
 * (nvvp_svg.c): one multi-line text per drawn interval, written into a
 * fixed buffer (truncated if ever longer), so drawing allocates nothing
 * per box.  Times are relative to `origin` (the trace start).
 *
 * Keys: rows group and colour intervals by a key, a pool id for named
 * things (kernels, API calls, markers) or NVVP_KEY_FIXED | kind << 8 |
 * copy kind for copies, memsets and syncs.
 */
#ifndef TRC_LIB_EXPORT_NVVP_SVGTIP_H
#define TRC_LIB_EXPORT_NVVP_SVGTIP_H

#include <stddef.h>
#include <stdint.h>

#include "lib/export/nvvp/nvvp_data.h"
#include "lib/export/nvvp/nvvp_lanes.h"

#define NVVP_TIP_MAX 4096
#define NVVP_KEY_FIXED 0x80000000u

typedef struct nvvp_tip {
    nvvp_data *d;           /* borrowed */
    trc_reader *r;          /* borrowed */
    int64_t origin;
    char text[NVVP_TIP_MAX];
    size_t len;
} nvvp_tip;

/* Each fills t->text and returns it. Cannot fail. */
const char *nvvp_tip_act(nvvp_tip *t, const nvvp_act *a);
const char *nvvp_tip_api(nvvp_tip *t, const nvvp_api *a);
const char *nvvp_tip_run(nvvp_tip *t, const nvvp_run *run);
const char *nvvp_tip_mark(nvvp_tip *t, const nvvp_mark *m);
/* A merged box: count, busy time, span, and the counts per key (keys
 * are frame ids, shown as call sites, when keys_are_frames). */
const char *nvvp_tip_group(nvvp_tip *t, const nvvp_box *b, const char *noun, int keys_are_frames);

/* "MainThread (tid 4242)", "tid 4250" or "thread #N". Returns buf. */
const char *nvvp_tip_thread(trc_reader *r, uint32_t thread, char *buf, size_t n);

/* Display name of a key (see above). Borrowed. */
const char *nvvp_key_label(const nvvp_data *d, uint32_t key);

#endif
