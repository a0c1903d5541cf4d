/*
 * py_layout.c — the generated per-version layout tables (py_layout.h),
 * selected by minor version at attach time.
 */
#include "lib/py/py_layout.h"

#include <stddef.h>

#include "lib/py/generated/layout_3_8.h"
#include "lib/py/generated/layout_3_9.h"
#include "lib/py/generated/layout_3_10.h"
#include "lib/py/generated/layout_3_11.h"
#include "lib/py/generated/layout_3_12.h"

const py_layout *py_layout_for_minor(unsigned minor)
{
    static const py_layout *const tables[] = {
        &py_layout_3_8, &py_layout_3_9, &py_layout_3_10, &py_layout_3_11, &py_layout_3_12,
    };

    if (minor < 8 || minor - 8 >= sizeof tables / sizeof tables[0])
        return NULL;
    return tables[minor - 8];
}
