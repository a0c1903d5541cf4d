/*
 * tests/support/pyenv.c — pyenv's root for the tests (pyenv.h).
 */
#include "tests/support/pyenv.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char *test_pyenv_root(void)
{
    static char root[PATH_MAX];
    static int looked;
    if (looked)
        return root[0] ? root : NULL;
    looked = 1;
    const char *env = getenv("PYENV_ROOT");
    if (env && *env) {
        snprintf(root, sizeof root, "%s", env);
    } else {
        FILE *p = popen("pyenv root 2>/dev/null", "r");
        if (p) {
            if (!fgets(root, sizeof root, p))
                root[0] = 0;
            root[strcspn(root, "\n")] = 0;
            if (pclose(p) != 0)
                root[0] = 0;
        }
    }
    struct stat st;
    if (root[0] && (stat(root, &st) != 0 || !S_ISDIR(st.st_mode)))
        root[0] = 0;
    return root[0] ? root : NULL;
}

int test_pyenv_glob(const char *rel, int flags, glob_t *g)
{
    const char *root = test_pyenv_root();
    char pat[PATH_MAX];
    if (!root)
        return GLOB_NOMATCH;
    int n = snprintf(pat, sizeof pat, "%s/%s", root, rel);
    if (n < 0 || (size_t)n >= sizeof pat)
        return GLOB_NOMATCH;
    return glob(pat, flags, NULL, g);
}
