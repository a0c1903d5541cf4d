/*
 * tests/support/pyenv.h — where pyenv keeps the interpreters the tests
 * run (every installed CPython): $PYENV_ROOT, else what `pyenv root`
 * prints, else none, and the tests that need them skip.  The shell
 * tests' twin is trec_pyenv_root (tests/e2e/lib/pythons.sh).
 */
#ifndef TRC_TESTS_SUPPORT_PYENV_H
#define TRC_TESTS_SUPPORT_PYENV_H

#include <glob.h>

/* pyenv's root directory, or NULL without pyenv.  Static storage. */
const char *test_pyenv_root(void);

/* glob(3) of the pattern rel below pyenv's root, with flags (such as
 * GLOB_APPEND); GLOB_NOMATCH, g untouched, without pyenv. */
int test_pyenv_glob(const char *rel, int flags, glob_t *g);

#endif
