/*
 * py_objlayout.c — the generated object-model tables (py_objlayout.h),
 * selected by minor version.
 */
#include "lib/py/py_objlayout.h"

#include <stddef.h>

#include "lib/py/generated/objects_3_8.h"
#include "lib/py/generated/objects_3_9.h"
#include "lib/py/generated/objects_3_10.h"
#include "lib/py/generated/objects_3_11.h"
#include "lib/py/generated/objects_3_12.h"
#include "lib/py/generated/objects_3_13.h"

const py_objlayout *py_objlayout_for_minor(unsigned minor)
{
    static const py_objlayout *const tables[] = {
        &py_objlayout_3_8,  &py_objlayout_3_9,  &py_objlayout_3_10,
        &py_objlayout_3_11, &py_objlayout_3_12, &py_objlayout_3_13,
    };

    if (minor < 8 || minor - 8 >= sizeof tables / sizeof tables[0])
        return NULL;
    return tables[minor - 8];
}
