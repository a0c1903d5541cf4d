#!/usr/bin/env bash
# trec's GPU wiring, end to end, on a machine without a GPU: trec puts the
# injection library in the program's environment, the program loads it the
# way the CUDA driver does (dlopen + InitializeInjection), the injection's
# side trace lands in trec's private directory, and trec appends it to the
# output as a second segment, then removes the directory.  --no-gpu leaves
# the environment alone.
set -u
so="$BUILD/libtrec-cupti.so"
[ -f "$so" ] || { echo "libtrec-cupti.so not built (no CUDA headers)"; exit 77; }
[ -z "${TRC_ASAN:-}" ] || { echo "sanitizer build: python cannot load an ASan-built library"; exit 77; }
py=$(command -v python3) || { echo "no python3"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/prog.py" <<'PY'
import ctypes, os, sys, time
path = os.environ.get("CUDA_INJECTION64_PATH")
print("injection", path)
if path:
    ctypes.CDLL(path).InitializeInjection()
t = time.monotonic()
while time.monotonic() - t < 0.3:
    sum(range(1000))
sys.exit(3)
PY
rc=0
"$BIN/trec" -o "$tmp/out.trc" "$py" "$tmp/prog.py" >"$tmp/out" 2>"$tmp/err" || rc=$?
cat "$tmp/out" "$tmp/err"
[ $rc -eq 3 ] || { echo "FAIL: exit status $rc, want the program's 3"; exit 1; }
grep -q "^injection /.*libtrec-cupti.so$" "$tmp/out" || { echo "FAIL: CUDA_INJECTION64_PATH not set for the program"; exit 1; }
ls -A "$tmp" | grep -q '^\.trec-gpu' && { echo "FAIL: side directory left behind"; exit 1; }
"$BIN/trc-dump" --check "$tmp/out.trc" || { echo "FAIL: merged trace does not check clean"; exit 1; }
segs=$("$BIN/trc-dump" "$tmp/out.trc" | grep -c ' SEGMENT v')
if grep -q 'cannot load CUPTI' "$tmp/err"; then
  [ "$segs" -eq 1 ] || { echo "FAIL: no CUPTI, yet $segs segments"; exit 1; }
else
  [ "$segs" -eq 2 ] || { echo "FAIL: want the main segment plus the side trace, got $segs"; exit 1; }
  "$BIN/trc-dump" "$tmp/out.trc" | grep -q 'LOSS .*GPU recording off' ||
    { echo "FAIL: the side trace's loss record (why GPU recording is off) is missing"; exit 1; }
  "$BIN/trc-dump" "$tmp/out.trc" | grep -q 'recorder="trec-cupti' || { echo "FAIL: no trec-cupti segment"; exit 1; }
fi

"$BIN/trec" --no-gpu -q -o "$tmp/nogpu.trc" "$py" "$tmp/prog.py" >"$tmp/out2" 2>&1
grep -qx "injection None" "$tmp/out2" || { echo "FAIL: --no-gpu still set the injection"; cat "$tmp/out2"; exit 1; }
"$BIN/trec" --version | grep -q '^GPU support: on' || { echo "FAIL: --version should say GPU support is on"; exit 1; }
echo ok
