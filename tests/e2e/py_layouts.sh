#!/usr/bin/env bash
# tests/e2e/py_layouts.sh — the committed lib/py/generated/layout_3_X.h tables are
# what scripts/pylayout/gen_layout.c prints when compiled against each installed
# CPython's own headers (so a table cannot drift from its headers), the same for
# values_3_X.h (scripts/pylayout/gen_values.c, 3.8–3.13 and 3.13t), the
# objects_3_X.h tables (3.13t's with Py_GIL_DISABLED) what gen_objects.c prints,
# the tests' 3.13 and 3.13t debug blocks what gen_debugblock.c prints, and a
# distribution's build (Debian's /usr/include/python3.X, when installed)
# has the same offsets as the table for its minor version.
set -u
cd "${TRC_ROOT:-$(dirname "$0")/../..}"
cc=${CC:-cc}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
checked=0 fail=0
gen() {  # gen INCLUDE_DIR VERSION OUT
  "$cc" -std=gnu11 -DPy_BUILD_CORE -I"$1" -I"$1/internal" -I/usr/include/x86_64-linux-gnu/"$(basename "$1")" \
    scripts/pylayout/gen_layout.c -o "$tmp/gen" 2>"$tmp/err" && "$tmp/gen" "$2" > "$3"
}
. tests/e2e/lib/pythons.sh
pyenv_root=$(trec_pyenv_root) || echo "no pyenv: only a distribution's headers are checked"
for pre in ${pyenv_root:+"$pyenv_root"/versions/3.*}; do
  [ -d "$pre/include" ] || continue
  v=$(basename "$pre"); m=$(echo "$v" | cut -d. -f1-2); mi=${m#3.}
  case $mi in 8|9|10|11|12) ;; *) continue ;; esac
  if ! gen "$pre/include/python$m" "$v" "$tmp/l.h"; then
    echo "cannot compile the generator against $v:"; cat "$tmp/err"; fail=1; continue
  fi
  if ! diff -u "lib/py/generated/layout_3_$mi.h" "$tmp/l.h"; then
    echo "lib/py/generated/layout_3_$mi.h differs from what $v's headers give (make py-layouts)"; fail=1
  fi
  checked=$((checked + 1))
done
# values_3_X.h and the object tables, 3.8-3.13 and the free-threaded 3.13t
# (make py-layouts): what gen_values.c and gen_objects.c print against the same headers
objs() {  # objs INCLUDE_DIR VERSION OUT [CFLAG]
  "$cc" -std=gnu11 -DPy_BUILD_CORE ${4:+"$4"} -I"$1" -I"$1/internal" scripts/pylayout/gen_objects.c \
    -o "$tmp/go" 2>"$tmp/err" && "$tmp/go" "$2" > "$3"
}
for pre in ${pyenv_root:+"$pyenv_root"/versions/3.*}; do
  [ -d "$pre/include" ] || continue
  v=$(basename "$pre"); m=$(echo "$v" | cut -d. -f1-2); mi=${m#3.}
  case $mi in 8|9|10|11|12|13) ;; *) continue ;; esac
  [ -f "$pre/include/python$m/Python.h" ] || continue
  if ! "$cc" -std=gnu11 -DPy_BUILD_CORE -I"$pre/include/python$m" -I"$pre/include/python$m/internal" \
    scripts/pylayout/gen_values.c -o "$tmp/genv" 2>"$tmp/err" || ! "$tmp/genv" "$v" > "$tmp/v.h"; then
    echo "cannot compile gen_values.c against $v:"; cat "$tmp/err"; fail=1; continue
  fi
  if ! diff -u "lib/py/generated/values_3_$mi.h" "$tmp/v.h"; then
    echo "lib/py/generated/values_3_$mi.h differs from what $v's headers give (make py-layouts)"; fail=1
  fi
  checked=$((checked + 1))
  for t in "" t; do
    [ -z "$t" ] || [ "$mi" = 13 ] || continue
    if ! objs "$pre/include/python$m" "$v" "$tmp/o.h" ${t:+-DPy_GIL_DISABLED}; then
      echo "cannot compile gen_objects.c against $v$t:"; cat "$tmp/err"; fail=1; continue
    fi
    if ! diff -u "lib/py/generated/objects_3_$mi$t.h" "$tmp/o.h"; then
      echo "lib/py/generated/objects_3_$mi$t.h differs from what $v's headers give (make py-layouts)"; fail=1
    fi
    checked=$((checked + 1))
    [ -n "$t" ] || continue
    if ! "$cc" -std=gnu11 -DPy_BUILD_CORE -DPy_GIL_DISABLED -I"$pre/include/python$m" -I"$pre/include/python$m/internal" \
      scripts/pylayout/gen_values.c -o "$tmp/genv" 2>"$tmp/err" || ! "$tmp/genv" "$v" > "$tmp/v.h"; then
      echo "cannot compile gen_values.c against $v$t:"; cat "$tmp/err"; fail=1; continue
    fi
    if ! diff -u "lib/py/generated/values_3_$mi$t.h" "$tmp/v.h"; then
      echo "lib/py/generated/values_3_$mi$t.h differs from what $v's headers give (make py-layouts)"; fail=1
    fi
    checked=$((checked + 1))
    # the tests' 3.13 debug blocks: the recorded 3.13.0 one is what
    # gen_debugblock.c prints from the headers, so the 3.13t one it
    # prints with Py_GIL_DISABLED is what a 3.13.0t carries
    [ "$v" = 3.13.0 ] || continue
    for b in "" T; do
      if ! "$cc" -std=gnu11 -DPy_BUILD_CORE ${b:+-DPy_GIL_DISABLED} -I"$pre/include/python$m" \
        -I"$pre/include/python$m/internal" scripts/pylayout/gen_debugblock.c -o "$tmp/gb" -no-pie \
        -Wl,--unresolved-symbols=ignore-all 2>"$tmp/err"; then
        echo "cannot compile gen_debugblock.c against $v${b:+t}:"; cat "$tmp/err"; fail=1; continue
      fi
      want=$(sed -n "/RAW_313$b\[\] =/,/;/p" tests/unit/py/py_debugoff_blocks.h | grep -o '"[0-9a-f]*"' | tr -d '"\n')
      if [ -z "$want" ] || [ "$("$tmp/gb" | tr -d '\n')" != "$want" ]; then
        echo "RAW_313$b (tests/unit/py/py_debugoff_blocks.h) is not what gen_debugblock.c prints from $v's headers"; fail=1
      fi
      checked=$((checked + 1))
    done
  done
done
# A distribution's headers: same offsets (header comment and name aside).
for inc in /usr/include/python3.*; do
  [ -d "$inc/internal" ] || continue
  m=${inc##*/python}; mi=${m#3.}
  [ -f "lib/py/generated/layout_3_$mi.h" ] || continue
  gen "$inc" "$m-distribution" "$tmp/d.h" || { echo "cannot compile against $inc"; cat "$tmp/err"; fail=1; continue; }
  if ! diff <(grep -v 'headers\|generated\|from the' "lib/py/generated/layout_3_$mi.h") <(grep -v 'headers\|generated\|from the' "$tmp/d.h"); then
    echo "$inc gives other offsets than lib/py/generated/layout_3_$mi.h"; fail=1
  else
    echo "$inc: same offsets as lib/py/generated/layout_3_$mi.h"
  fi
  checked=$((checked + 1))
done
if [ $checked -eq 0 ]; then echo "no CPython headers installed"; exit 77; fi
echo "$checked header sets checked"
exit $fail
