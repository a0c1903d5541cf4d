#!/usr/bin/env bash
# Without CUDA (CUDA_HOME=/nonexistent) trec still builds, says GPU support
# is off, sets no injection for the program, and records it: the README's
# `make test` checks this, not only .ci/run's separate no-CUDA build.
# Only trec is built, into a temporary tree seeded with $BUILD's objects:
# none of them depends on CUDA_HOME except lib/gpu/gpu_support.o, whose
# configuration stamp (mk/cupti.mk) forces it rebuilt, so this costs one
# compile and the links, not a build.
set -u
[ -z "${TRC_ASAN:-}" ] || { echo "sanitizer build: the plain run checks the no-CUDA build"; exit 77; }
[ -d "$BUILD/lib" ] && [ -d "$BUILD/format" ] || { echo "$BUILD not built"; exit 77; }
py=$(command -v python3) || { echo "no python3"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
b="$tmp/build" bin="$tmp/bin"
mkdir -p "$b"
cp -a "$BUILD/lib" "$BUILD/format" "$BUILD/tools" "$b/"
rm -rf "$b/lib/cupti" "$b"/lib/gpu/gpu_support.*
make -s SKIP_DEPS=1 BUILD="$b" BIN="$bin" CUDA_HOME=/nonexistent "$bin/trec" >"$tmp/make.log" 2>&1 ||
  { cat "$tmp/make.log"; echo "FAIL: trec does not build with CUDA_HOME=/nonexistent"; exit 1; }
[ ! -e "$b/libtrec-cupti.so" ] || { echo "FAIL: the injection was built without CUDA"; exit 1; }

unset TREC_CUPTI_INJECTION
"$bin/trec" --version | grep -qx 'GPU support: off (built without CUDA)' ||
  { "$bin/trec" --version; echo "FAIL: --version should say GPU support is off"; exit 1; }

cat > "$tmp/prog.py" <<'PY'
import os, sys, time
print("injection", os.environ.get("CUDA_INJECTION64_PATH"))
t = time.monotonic()
while time.monotonic() - t < 0.3:
    sum(range(1000))
sys.exit(5)
PY
rc=0
"$bin/trec" -o "$tmp/out.trc" "$py" "$tmp/prog.py" >"$tmp/out" 2>"$tmp/err" || rc=$?
cat "$tmp/out" "$tmp/err"
[ $rc -eq 5 ] || { echo "FAIL: exit status $rc, want the program's 5"; exit 1; }
grep -qx "injection None" "$tmp/out" || { echo "FAIL: CUDA_INJECTION64_PATH set without GPU support"; exit 1; }
# (the summary line names the output file, whose temporary name is random)
grep -v '^trec: [0-9]* samples' "$tmp/err" | grep -qi 'gpu\|cuda' &&
  { echo "FAIL: a GPU warning on a build without CUDA"; exit 1; }
"$BIN/trc-dump" --check "$tmp/out.trc" >/dev/null || { echo "FAIL: trace does not check clean"; exit 1; }
"$BIN/trc-dump" --summary "$tmp/out.trc" >"$tmp/sum"
grep -q '^segments: 1$' "$tmp/sum" || { cat "$tmp/sum"; echo "FAIL: want one segment"; exit 1; }
samples=$(sed -n 's/^samples: \([0-9]*\) .*/\1/p' "$tmp/sum")
[ "${samples:-0}" -ge 50 ] || { cat "$tmp/sum"; echo "FAIL: only ${samples:-0} samples in 0.3 s"; exit 1; }
echo ok
