#!/usr/bin/env bash
# `make install PREFIX=...` gives a third party what it needs to write a
# converter: the header, the library, trc.pc, the tools and man pages.  The
# example converter in docs/examples builds with pkg-config alone (static
# and shared) and reads a fixture.
set -u
[ -z "${TRC_ASAN:-}" ] || { echo "sanitizer build: install test runs in the normal build"; exit 77; }
command -v pkg-config >/dev/null || { echo "no pkg-config"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
make -s install PREFIX="$tmp/usr" BUILD="$BUILD" BIN="$BIN" SKIP_DEPS=1 >"$tmp/log" 2>&1 || { cat "$tmp/log"; echo "FAIL: make install"; exit 1; }
for f in bin/trec bin/trc-dump bin/trc2collapsed bin/trc-stats bin/trc2pstats bin/trc2speedscope \
         bin/trc2chrome bin/trc2nvvp include/trc/trc.h lib/libtrc.a lib/libtrc.so lib/pkgconfig/trc.pc \
         share/man/man1/trec.1 share/man/man1/trc-dump.1; do
  [ -e "$tmp/usr/$f" ] || { echo "FAIL: $f not installed"; exit 1; }
done
export PKG_CONFIG_PATH="$tmp/usr/lib/pkgconfig"
[ "$(pkg-config --modversion trc)" = "$(sed -n 's/^#define TRC_VERSION_STRING "\(.*\)"/\1/p' include/trc/trc.h)" ] ||
  { echo "FAIL: trc.pc version"; exit 1; }
cc -std=c11 -Wall -Wextra -Werror docs/examples/trc-count.c $(pkg-config --cflags trc) \
  -o "$tmp/count-shared" $(pkg-config --libs trc) || { echo "FAIL: shared build"; exit 1; }
cc -std=c11 -Wall -Wextra -Werror docs/examples/trc-count.c $(pkg-config --cflags trc) \
  -o "$tmp/count-static" "$tmp/usr/lib/libtrc.a" $(pkg-config --libs-only-other --static trc) \
  $(pkg-config --static --libs trc | sed 's/-ltrc//') || { echo "FAIL: static build"; exit 1; }
LD_LIBRARY_PATH="$tmp/usr/lib" "$tmp/count-shared" fixtures/valid/samples.trc >"$tmp/a" || { echo "FAIL: run shared"; exit 1; }
"$tmp/count-static" fixtures/valid/samples.trc >"$tmp/b" || { echo "FAIL: run static"; exit 1; }
cat "$tmp/a"
cmp -s "$tmp/a" "$tmp/b" || { echo "FAIL: static and shared disagree"; exit 1; }
grep -q "s on CPU" "$tmp/a" || { echo "FAIL: no thread totals"; exit 1; }
# the tools' own --version agrees with the library
"$tmp/usr/bin/trc-dump" --version | grep -q "$(pkg-config --modversion trc)" || { echo "FAIL: trc-dump --version"; exit 1; }
echo ok
