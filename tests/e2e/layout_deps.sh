#!/usr/bin/env bash
# tests/e2e/layout_deps.sh — lib/export keeps one folder per sink
# (docs/design/architecture.md §3): a sink's files may include their own
# folder, lib/export/common/ and anything outside lib/export/, never
# another sink's folder; lib/export/common/ includes no sink folder.  The
# files directly in lib/export/ (the sink interface and the list of
# sinks) sit above the sinks and may include any of them.  An include
# climbing with ".." is refused too: it would hide where it points.
#
# Fails (exit 1, one "file:line: what" per problem).  The checker first
# runs on a made-up tree whose problems are known, so a checker that
# finds nothing (or too much) fails here too.  Exit 0 pass.
set -u
cd "${TRC_ROOT:-$(dirname "$0")/../..}"

# check DIR: the problems of the lib/export tree under DIR, one a line.
check() {
  local dir=$1 f folder line target
  (cd "$dir" && find lib/export -mindepth 2 -name '*.[ch]' | LC_ALL=C sort) | while read -r f; do
    folder=${f#lib/export/}
    folder=${folder%%/*}
    grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$dir/$f" | while IFS= read -r line; do
      target=${line#*\"}
      target=${target%%\"*}
      case $target in
        *..*) echo "$f:${line%%:*}: includes \"$target\" (a path with ..)" ;;
        lib/export/*/*)
          target=${target#lib/export/}
          target=${target%%/*}
          if [ "$target" != "$folder" ] && [ "$target" != common ]; then
            echo "$f:${line%%:*}: the $folder folder includes the $target sink"
          fi ;;
      esac
    done
  done
}

# The checker on a tree with known problems.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/lib/export/a" "$tmp/lib/export/b" "$tmp/lib/export/common"
printf '#include "lib/export/a/a.h"\n#include "lib/export/common/x.h"\n#include "trc/trc.h"\n' >"$tmp/lib/export/a/a.c"
printf '#include "lib/export/b/b.h"\n  #  include "lib/export/a/a.h"\n' >"$tmp/lib/export/b/b.c"
printf '#include "lib/export/a/a.h"\n#include "../b/b.h"\n' >"$tmp/lib/export/common/x.c"
printf '#include "lib/export/a/a.h"\n#include "lib/export/b/b.h"\n' >"$tmp/lib/export/sinks.c"
want="lib/export/b/b.c:2: the b folder includes the a sink
lib/export/common/x.c:1: the common folder includes the a sink
lib/export/common/x.c:2: includes \"../b/b.h\" (a path with ..)"
got=$(check "$tmp")
if [ "$got" != "$want" ]; then
  echo "layout_deps: the checker is wrong on its own example; it found:"
  echo "$got"
  exit 1
fi

problems=$(check .)
if [ -n "$problems" ]; then
  echo "$problems"
  exit 1
fi
echo "layout_deps: ok ($(find lib/export -mindepth 2 -name '*.[ch]' | wc -l) files)"
