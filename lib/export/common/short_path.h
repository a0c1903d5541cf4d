/*
 * lib/export/common/short_path.h — the shortened source path every
 * exporter shows by default (folded stacks, the nvprof API trace's call
 * sites), so that one file reads the same in all of them.
 */
#ifndef TRC_LIB_EXPORT_COMMON_SHORT_PATH_H
#define TRC_LIB_EXPORT_COMMON_SHORT_PATH_H

/* The part after ".../site-packages/" or ".../dist-packages/" (the
 * innermost, as virtualenvs nest them), else after ".../lib/pythonX.Y/",
 * else the last two path components.  Returns a pointer into path.
 * Cannot fail. */
const char *exp_short_path(const char *path);

#endif /* TRC_LIB_EXPORT_COMMON_SHORT_PATH_H */
