#!/usr/bin/env bash
# tests/e2e/layout_layers.sh — includes point down the layers of
# docs/design/architecture.md §2, never up:
#   lib/util      the containers: trc/trc.h and lib/util only
#   format/       the codec: lib/util, nothing else of lib/, no tools/
#   lib/*.c|h     the core (reader, writer, model): no lib subfolder but
#                 lib/util, no tools/
#   lib/export, lib/dump   what converters write: not the recorder
#                 (lib/rec), the CPython walker (lib/py) or the GPU
#                 recording (lib/gpu, lib/cupti)
#   lib/py        the CPython walker: none of lib/rec, lib/gpu,
#                 lib/cupti, lib/export, lib/dump
#   lib/**        nothing of tools/
# A cycle between layers needs an include that points up, so none can
# form while this passes.  The sink folders inside lib/export are checked
# by layout_deps.sh.
#
# Fails (exit 1, one "file:line: what" per problem).  The checker first
# runs on a made-up tree whose problems are known.  Exit 0 pass.
set -u
cd "${TRC_ROOT:-$(dirname "$0")/../..}"

# forbidden FILE: the extended regex of include targets FILE may not name.
forbidden() {
  case $1 in
    lib/util/*) echo '^(format|tools|lib/[^u]|lib/u[^t])' ;;
    format/*) echo '^(tools/|lib/[^u]|lib/u[^t])' ;;
    lib/export/* | lib/dump/*) echo '^(tools/|lib/(rec|py|gpu|cupti)/)' ;;
    lib/py/*) echo '^(tools/|lib/(rec|gpu|cupti|export|dump)/)' ;;
    lib/*/*) echo '^tools/' ;;
    lib/*) echo '^(tools/|lib/(rec|py|gpu|cupti|export|dump)/)' ;;
  esac
}

# check DIR: the problems of the tree under DIR, one a line.
check() {
  local dir=$1 f re line target
  (cd "$dir" && find format lib -name '*.[ch]' 2>/dev/null | LC_ALL=C sort) | while read -r f; do
    re=$(forbidden "$f")
    [ -n "$re" ] || continue
    grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$dir/$f" | while IFS= read -r line; do
      target=${line#*\"}
      target=${target%%\"*}
      if printf '%s\n' "$target" | grep -Eq "$re"; then
        echo "$f:${line%%:*}: includes \"$target\", a layer above it"
      fi
    done
  done
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/format" "$tmp/lib/util" "$tmp/lib/export/chrome" "$tmp/lib/py" "$tmp/lib/rec"
printf '#include "lib/util/alloc.h"\n#include "lib/model.h"\n' >"$tmp/format/a.c"
printf '#include "trc/trc.h"\n#include "lib/util/arena.h"\n#include "format/buf.h"\n' >"$tmp/lib/util/b.c"
printf '#include "lib/util/grow.h"\n#include "lib/export/sink.h"\n' >"$tmp/lib/model.c"
printf '#include "lib/export/common/x.h"\n#include "lib/py/py_mem.h"\n' >"$tmp/lib/export/chrome/c.c"
printf '#include "lib/util/hashtab.h"\n#include "lib/rec/rec.h"\n' >"$tmp/lib/py/d.c"
printf '#include "lib/py/pyproc.h"\n#include "tools/common/cli.h"\n' >"$tmp/lib/rec/e.c"
want="format/a.c:2: includes \"lib/model.h\", a layer above it
lib/export/chrome/c.c:2: includes \"lib/py/py_mem.h\", a layer above it
lib/model.c:2: includes \"lib/export/sink.h\", a layer above it
lib/py/d.c:2: includes \"lib/rec/rec.h\", a layer above it
lib/rec/e.c:2: includes \"tools/common/cli.h\", a layer above it
lib/util/b.c:3: includes \"format/buf.h\", a layer above it"
got=$(check "$tmp")
if [ "$got" != "$want" ]; then
  echo "layout_layers: the checker is wrong on its own example; it found:"
  echo "$got"
  exit 1
fi

problems=$(check .)
if [ -n "$problems" ]; then
  echo "$problems"
  exit 1
fi
echo "layout_layers: ok ($(find format lib -name '*.[ch]' | wc -l) files)"
