#!/usr/bin/env bash
# A program that leaves through os._exit (as multiprocessing's workers
# do) runs no exit handler, so the injection never closes its side trace.
# Under the real trec over the fake CUPTI (tests/gpu/fake_native_launch.c):
# kernels launched, then os._exit.  trec passes the exit status on, warns
# once that the process ended without closing its GPU trace, and the
# merged trace checks clean (trc-dump --check: no segment cut short),
# with one recorded loss that names the process and os._exit, and the
# side segment's totals equal to what it holds (--check compares them).
# retry-once: records a live program against the clock
. "$(dirname "$0")/lib/fake_launch_common.sh"
cat > "$tmp/prog.py" <<'PY'
import ctypes, os, sys, time
lib = ctypes.CDLL(sys.argv[1])
if lib.fake_start() != 0:
    sys.exit(2)
lib.fake_native_launches(5, 2)
lib.fake_flush()         # a flusher round: these 5 reach the side trace
lib.fake_native_launches(5, 2)
os._exit(4)              # no exit handler: the side trace stays open
PY
rc=0
"$BIN/trec" -o "$tmp/out.trc" "$py" "$tmp/prog.py" "$(realpath "$fake")" >"$tmp/out" 2>"$tmp/err" || rc=$?
cat "$tmp/out" "$tmp/err"
[ $rc -eq 4 ] || { echo "FAIL: exit status $rc, want the program's 4"; exit 1; }
[ "$(grep -c 'ended without closing its GPU trace' "$tmp/err")" -eq 1 ] ||
  { echo "FAIL: want one warning that the process ended without closing its GPU trace"; exit 1; }
"$BIN/trc-dump" --check "$tmp/out.trc" || { echo "FAIL: merged trace does not check clean"; exit 1; }
"$BIN/trc-dump" "$tmp/out.trc" > "$tmp/dump"
[ "$(grep -c ' SEGMENT v' "$tmp/dump")" -eq 2 ] || { echo "FAIL: want the main segment and one side trace"; exit 1; }
[ "$(grep -c ' SEGMENT_END ' "$tmp/dump")" -eq 2 ] || { echo "FAIL: want both segments ended"; exit 1; }
grep -E ' LOSS .*kind=9 count=1 pid=[0-9]+ .*detail=#[0-9]+"pid [0-9]+ ended without closing its GPU trace \(os\._exit' "$tmp/dump" ||
  { echo "FAIL: want one recorded loss naming os._exit"; exit 1; }
kernels=$(grep -c ' GPU_KERNEL ' "$tmp/dump")
[ "$kernels" -eq 5 ] || { echo "FAIL: $kernels kernels, want the 5 flushed before os._exit"; exit 1; }
echo "ok: os._exit after $kernels kernels recorded: the side trace closed by trec, the loss said"
