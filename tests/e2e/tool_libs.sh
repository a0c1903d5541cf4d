#!/usr/bin/env bash
# Which shared libraries each program needs at run time: libxml2 only for
# trc2nvvp (the SVG timeline), ncurses only for trc-top (the live
# screen), cJSON for none; every other tool, and
# libtrc.so, needs only the C library, libm, zlib and the loader (libdl
# and libpthread where the C library is split).
set -u
cd "${TRC_ROOT:-$(dirname "$0")/../..}"
BUILD=${BUILD:-build} BIN=${BIN:-bin}
command -v readelf > /dev/null || { echo "skip: readelf not installed (binutils)"; exit 77; }

needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p'; }
allowed='^(libc|libm|libz|libdl|libpthread)\.so\.[0-9]+$|^ld-linux[-a-z0-9_]*\.so\.[0-9]+$'
# The sanitizer build links its runtimes into everything.
[ -z "${TRC_ASAN:-}" ] || allowed="$allowed|^lib(asan|ubsan)\\.so\\.[0-9]+\$"

fails=0
for f in "$BIN/trec" "$BIN/trc-dump" "$BIN/trc-stats" "$BIN/trc2collapsed" "$BIN/trc2pstats" \
         "$BIN/trc-lines" \
         "$BIN/trc2speedscope" "$BIN/trc2chrome" "$BIN/trc2flamegraph" "$BUILD/libtrc.so"; do
  [ -f "$f" ] || { echo "FAIL: $f not built"; fails=$((fails + 1)); continue; }
  libs=$(needed "$f")
  echo "$f: $(echo $libs)"
  echo "$libs" | grep -q '^libc\.so\.' || { echo "FAIL: $f: no libc among its NEEDED entries (readelf output not understood)"; fails=$((fails + 1)); }
  extra=$(echo "$libs" | grep -vE "$allowed")
  [ -z "$extra" ] || { echo "FAIL: $f needs $(echo $extra)"; fails=$((fails + 1)); }
done
# The one tool that writes SVG does link libxml2 (and nothing links cJSON).
if [ -f "$BIN/trc2nvvp" ]; then
  libs=$(needed "$BIN/trc2nvvp")
  echo "$BIN/trc2nvvp: $(echo $libs)"
  echo "$libs" | grep -q '^libxml2\.so' || { echo "FAIL: $BIN/trc2nvvp does not need libxml2"; fails=$((fails + 1)); }
  ! echo "$libs" | grep -q cjson || { echo "FAIL: $BIN/trc2nvvp needs cJSON"; fails=$((fails + 1)); }
else
  echo "FAIL: $BIN/trc2nvvp not built"; fails=$((fails + 1))
fi
# The live view links ncurses (and its terminfo library), nothing else extra.
if [ -f "$BIN/trc-top" ]; then
  libs=$(needed "$BIN/trc-top")
  echo "$BIN/trc-top: $(echo $libs)"
  echo "$libs" | grep -q '^libncurses' || { echo "FAIL: $BIN/trc-top does not need ncurses"; fails=$((fails + 1)); }
  extra=$(echo "$libs" | grep -vE "$allowed|^lib(ncursesw?|tinfo)\.so\.[0-9]+\$")
  [ -z "$extra" ] || { echo "FAIL: $BIN/trc-top needs $(echo $extra)"; fails=$((fails + 1)); }
else
  echo "FAIL: $BIN/trc-top not built"; fails=$((fails + 1))
fi
[ $fails = 0 ] || exit 1
echo ok
