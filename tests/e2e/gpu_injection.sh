#!/usr/bin/env bash
# libtrec-cupti.so loaded the way the CUDA driver loads it (dlopen, then
# InitializeInjection) into a Python program on this GPU-less machine:
# CUPTI refuses, so exactly one warning, the program's own output and
# exit status unchanged, a second call a no-op, and a valid side trace in
# TREC_GPU_DIR saying why GPU recording is off.  Then without TREC_GPU_DIR
# (CUDA_INJECTION64_PATH set by hand): ./trec-gpu-PID.trc and a note.
set -u
so="$BUILD/libtrec-cupti.so"
[ -f "$so" ] || { echo "libtrec-cupti.so not built (no CUDA headers)"; exit 77; }
[ -z "${TRC_ASAN:-}" ] || { echo "sanitizer build: python cannot load an ASan-built library"; exit 77; }
py=$(command -v python3) || { echo "no python3"; exit 77; }
so=$(realpath "$so")
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/prog.py" <<'PY'
import ctypes, os, sys
lib = ctypes.CDLL(sys.argv[1])
print("first", lib.InitializeInjection())
print("second", lib.InitializeInjection())
print("pid", os.getpid())
sys.exit(7)
PY
rc=0
TREC_GPU_DIR="$tmp" "$py" "$tmp/prog.py" "$so" >"$tmp/out" 2>"$tmp/err" || rc=$?
cat "$tmp/out" "$tmp/err"
[ $rc -eq 7 ] || { echo "FAIL: program exit status $rc, want 7"; exit 1; }
grep -qx "first 1" "$tmp/out" && grep -qx "second 1" "$tmp/out" || { echo "FAIL: InitializeInjection must return 1"; exit 1; }
[ "$(grep -c '^trec: ' "$tmp/err")" -eq 1 ] || { echo "FAIL: want exactly one warning"; exit 1; }
grep -q '^trec: GPU recording off: ' "$tmp/err" || { echo "FAIL: warning text"; exit 1; }
pid=$(sed -n 's/^pid //p' "$tmp/out")
side="$tmp/gpu-$pid.trc"
if grep -q 'cannot load CUPTI' "$tmp/err"; then
  [ ! -e "$side" ] || { echo "FAIL: no CUPTI yet a side trace"; exit 1; }
else
  "$BIN/trc-dump" --check "$side" || { echo "FAIL: side trace invalid"; exit 1; }
  "$BIN/trc-dump" "$side" | grep -q 'LOSS .*GPU recording off' || { echo "FAIL: no loss record saying why"; exit 1; }
fi

# by hand, no TREC_GPU_DIR: a file in the working directory and one note
mkdir "$tmp/cwd"
(cd "$tmp/cwd" && env -u TREC_GPU_DIR "$py" "$tmp/prog.py" "$so" >"$tmp/out2" 2>"$tmp/err2")
cat "$tmp/err2"
if ! grep -q 'cannot load CUPTI' "$tmp/err2"; then
  pid=$(sed -n 's/^pid //p' "$tmp/out2")
  grep -q "TREC_GPU_DIR is not set.*trec-gpu-$pid.trc" "$tmp/err2" || { echo "FAIL: no note about the default path"; exit 1; }
  [ -s "$tmp/cwd/trec-gpu-$pid.trc" ] || { echo "FAIL: ./trec-gpu-$pid.trc missing"; exit 1; }
fi
echo "ok"
