#!/usr/bin/env bash
# trec finds libtrec-cupti.so relative to its own executable, never in the
# build directory it was compiled in: an installed tree moved elsewhere
# (PREFIX/bin/trec, PREFIX/lib/trc/libtrec-cupti.so) says GPU support is
# on with its own copy, and a program it records, which plays the CUDA
# driver over the fake CUPTI (tests/gpu/fake_driver.c), loads that copy
# and has its side trace merged into trec's output.  A copy of the build
# tree's layout (BIN/trec, BUILD/libtrec-cupti.so) finds its own copy
# too; a trec copied alone finds none and says where it looked.
set -u
cd "${TRC_ROOT:-$(dirname "$0")/../..}"
BUILD=${BUILD:-build} BIN=${BIN:-bin}
[ -f "$BUILD/libtrec-cupti.so" ] || { echo "skip: libtrec-cupti.so not built (no CUDA headers)"; exit 77; }
[ -z "${TRC_ASAN:-}" ] || { echo "skip: sanitizer build: the injection cannot be loaded into an uninstrumented program"; exit 77; }
driver=$(realpath "$BUILD/tests/gpu/fake_driver")
[ -x "$driver" ] || { echo "FAIL: $BUILD/tests/gpu/fake_driver not built"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset TREC_CUPTI_INJECTION CUDA_INJECTION64_PATH NVTX_INJECTION64_PATH TREC_GPU_DIR

# 1. Installed, then moved: nothing of the install prefix or of this tree is used.
make -s install PREFIX="$tmp/inst" BUILD="$BUILD" BIN="$BIN" SKIP_DEPS=1 > "$tmp/log" 2>&1 ||
  { cat "$tmp/log"; echo "FAIL: make install"; exit 1; }
[ -f "$tmp/inst/lib/trc/libtrec-cupti.so" ] || { echo "FAIL: make install did not put libtrec-cupti.so in PREFIX/lib/trc"; exit 1; }
mv "$tmp/inst" "$tmp/moved"
moved=$(realpath "$tmp/moved")
"$moved/bin/trec" --version > "$tmp/version" || { echo "FAIL: trec --version"; exit 1; }
cat "$tmp/version"
grep -q "^GPU support: built in, .* found at $moved/lib/trc/libtrec-cupti.so;" "$tmp/version" ||
  { echo "FAIL: the moved trec does not use its own lib/trc/libtrec-cupti.so"; exit 1; }

rc=0
"$moved/bin/trec" -o "$tmp/out.trc" "$driver" > "$tmp/out" 2> "$tmp/err" || rc=$?
cat "$tmp/out" "$tmp/err"
[ $rc -eq 0 ] || { echo "FAIL: trec exit status $rc"; exit 1; }
grep -qx "injection $moved/lib/trc/libtrec-cupti.so" "$tmp/out" ||
  { echo "FAIL: CUDA_INJECTION64_PATH is not the moved tree's library"; exit 1; }
kernels=$(sed -n 's/^kernels //p' "$tmp/out")
[ "${kernels:-0}" -gt 0 ] || { echo "FAIL: the fake driver launched no kernels"; exit 1; }
"$moved/bin/trc-dump" --check "$tmp/out.trc" > /dev/null || { echo "FAIL: merged trace does not check clean"; exit 1; }
"$moved/bin/trc-dump" "$tmp/out.trc" > "$tmp/dump"
[ "$(grep -c ' SEGMENT v' "$tmp/dump")" -eq 2 ] || { echo "FAIL: want trec's segment and one side trace"; exit 1; }
grep -q 'recorder="trec-cupti' "$tmp/dump" || { echo "FAIL: no trec-cupti segment merged"; exit 1; }
got=$("$moved/bin/trc-dump" --summary "$tmp/out.trc" | sed -n 's/^ *gpu_kernel  *\([0-9]*\)$/\1/p')
[ "${got:-0}" = "$kernels" ] || { echo "FAIL: $kernels kernels launched, ${got:-none} in the merged trace"; exit 1; }
ls -A "$tmp" | grep -q '^\.trec-gpu' && { echo "FAIL: side directory left behind"; exit 1; }

# 2. The build tree's layout, copied: BIN/trec finds BUILD/libtrec-cupti.so.
mkdir -p "$tmp/tree/$BIN" "$tmp/tree/$BUILD"
cp "$BIN/trec" "$tmp/tree/$BIN/" && cp "$BUILD/libtrec-cupti.so" "$tmp/tree/$BUILD/" || { echo "FAIL: copy"; exit 1; }
want=$(realpath "$tmp/tree/$BUILD/libtrec-cupti.so")
"$tmp/tree/$BIN/trec" --version | grep -q "found at $want;" ||
  { "$tmp/tree/$BIN/trec" --version; echo "FAIL: a copied build tree does not use its own library"; exit 1; }

# 3. trec alone: no library beside it, and none from where it was built.
mkdir -p "$tmp/alone/bin"
cp "$BIN/trec" "$tmp/alone/bin/"
"$tmp/alone/bin/trec" --version > "$tmp/alone.txt"
cat "$tmp/alone.txt"
grep -q '^GPU support: off (libtrec-cupti.so not found; looked in \$TREC_CUPTI_INJECTION, BINDIR/../lib/trc and BINDIR/' "$tmp/alone.txt" ||
  { echo "FAIL: a lone trec must say GPU support is off and where it looked"; exit 1; }
echo ok
