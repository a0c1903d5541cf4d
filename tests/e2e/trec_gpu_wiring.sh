#!/usr/bin/env bash
# trec's GPU wiring, end to end, on a machine without a GPU: trec puts the
# injection library in the program's environment, the program loads it the
# way the CUDA driver does (dlopen + InitializeInjection), the injection's
# side trace lands in trec's private directory, and trec appends it to the
# output as a second segment, then removes the directory.  A child started
# with multiprocessing's spawn inherits the environment and adds a side
# trace (a segment) of its own.  When libcupti cannot be loaded, one
# warning and the CPU recording as usual.  --no-gpu leaves the environment
# alone.
set -u
so="$BUILD/libtrec-cupti.so"
[ -f "$so" ] || { echo "libtrec-cupti.so not built (no CUDA headers)"; exit 77; }
[ -z "${TRC_ASAN:-}" ] || { echo "sanitizer build: python cannot load an ASan-built library"; exit 77; }
py=$(command -v python3) || { echo "no python3"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/prog.py" <<'PY'
import ctypes, multiprocessing, os, sys, time

def load_injection():
    path = os.environ.get("CUDA_INJECTION64_PATH")
    if path:
        ctypes.CDLL(path).InitializeInjection()
    return path

def child(q):
    load_injection()
    q.put(os.getpid())

if __name__ == "__main__":
    print("injection", load_injection())
    print("pid", os.getpid())
    # a spawned child (a fresh interpreter, as torch DataLoader workers or
    # torchrun use) inherits the environment: an injection of its own
    if not os.environ.get("NO_CHILD"):
        ctx = multiprocessing.get_context("spawn")
        q = ctx.Queue()
        p = ctx.Process(target=child, args=(q,))
        p.start()
        print("child", q.get())
        p.join()
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
  [ "$segs" -eq 3 ] || { echo "FAIL: want the main segment plus two side traces (program, spawned child), got $segs"; exit 1; }
  [ "$("$BIN/trc-dump" "$tmp/out.trc" | grep -c 'recorder="trec-cupti')" -eq 2 ] ||
    { echo "FAIL: want two trec-cupti segments"; exit 1; }
  # each process's side trace says, under its own pid, why GPU recording is off
  want=$(sed -n 's/^\(pid\|child\) //p' "$tmp/out" | sort -n | tr '\n' ' ')
  got=$("$BIN/trc-dump" "$tmp/out.trc" | sed -n 's/.* LOSS .* pid=\([0-9]*\) .*GPU recording off.*/\1/p' | sort -n | tr '\n' ' ')
  [ "$got" = "$want" ] || { echo "FAIL: GPU-off loss records for pids '$got', want '$want'"; exit 1; }
fi

# No libcupti to be found: one clear warning, and CPU recording goes on.
rc=0
NO_CHILD=1 TREC_CUPTI_LIB=/nonexistent/libcupti.so.13 "$BIN/trec" -o "$tmp/nocupti.trc" "$py" "$tmp/prog.py" \
  >"$tmp/out3" 2>"$tmp/err3" || rc=$?
cat "$tmp/err3"
[ $rc -eq 3 ] || { echo "FAIL: without CUPTI: exit status $rc, want 3"; exit 1; }
[ "$(grep -c 'GPU' "$tmp/err3")" -eq 1 ] && grep -q '^trec: GPU recording off: cannot load CUPTI: .*/nonexistent/libcupti.so.13' "$tmp/err3" ||
  { echo "FAIL: want one warning naming the missing libcupti"; exit 1; }
"$BIN/trc-dump" --check "$tmp/nocupti.trc" >/dev/null || { echo "FAIL: trace without CUPTI does not check clean"; exit 1; }
[ "$("$BIN/trc-dump" "$tmp/nocupti.trc" | grep -c ' SEGMENT v')" -eq 1 ] || { echo "FAIL: without CUPTI, want the main segment only"; exit 1; }
"$BIN/trc-dump" --events "$tmp/nocupti.trc" | grep -q '^sample' || { echo "FAIL: no CPU samples without CUPTI"; exit 1; }
# -q silences the injection's warnings too (it runs in the program)
rc=0
NO_CHILD=1 TREC_CUPTI_LIB=/nonexistent/libcupti.so.13 "$BIN/trec" -q -o "$tmp/nocupti-q.trc" "$py" "$tmp/prog.py" \
  >"$tmp/out4" 2>"$tmp/err4" || rc=$?
[ $rc -eq 3 ] && [ ! -s "$tmp/err4" ] || { cat "$tmp/err4"; echo "FAIL: trec -q: exit $rc, and the above on stderr"; exit 1; }

"$BIN/trec" --no-gpu -q -o "$tmp/nogpu.trc" "$py" "$tmp/prog.py" >"$tmp/out2" 2>&1
grep -qx "injection None" "$tmp/out2" || { echo "FAIL: --no-gpu still set the injection"; cat "$tmp/out2"; exit 1; }
# the header says whether CUDA records can follow (spec [R-HDR-5]): the
# converters keep no sample history for pairing them when they cannot
"$BIN/trc-dump" "$tmp/nogpu.trc" | grep -q '"gpu.activity"="off"' ||
  { echo "FAIL: a --no-gpu trace's header does not say gpu.activity=off"; exit 1; }
"$BIN/trc-dump" "$tmp/out.trc" | grep ' SEGMENT_HEADER' | head -1 | grep -q '"gpu.activity"="cupti"' ||
  { echo "FAIL: a GPU-recorded trace's header does not say gpu.activity=cupti"; exit 1; }
# built in and the injection found, which says nothing about a GPU: none is here
"$BIN/trec" --version | grep -qx "GPU support: built in, CUPTI [0-9]*\.[0-9]* injection found at /.*/libtrec-cupti\.so; libcupti and GPUs are looked for when a program runs" ||
  { "$BIN/trec" --version; echo "FAIL: --version should say GPU support is built in, and where the injection is"; exit 1; }
echo ok
