#!/usr/bin/env bash
# Time inside a C extension (numpy's dot, single-threaded BLAS) lands on
# the Python line that called it, on CPU (in at least about half the
# share of a CPU the program got).  Runs on every interpreter that
# has numpy (Debian's python3 with python3-numpy here).
# retry-once: records a live program against the clock (tests/run-all)
. "$(dirname "$0")/lib/trec_common.sh"

one() {
  local py=$1 ver=$2 tag=$3 rc=0
  "$py" -c 'import numpy' 2>/dev/null || { echo "no numpy for $py"; return 77; }
  mkdir -p "$TMPD/$tag"
  local out="$TMPD/$tag/np.trc"
  # the program's CPU time is the reference for its on-CPU samples
  OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 TREC_SELF_TIMING=1 \
    "$CHECK_PY" "$TRC_ROOT/tests/e2e/lib/cpu_of.py" "$out.usage" \
    timeout 120 "$TREC" -q -o "$out" "$py" "$FIX/trec_numpy.py" 1.0 2>"$out.trec-err" || rc=$?
  [ $rc -eq 0 ] || { cat "$out.trec-err"; echo "trec exited $rc"; return 1; }
  dump_trace "$out" || return 1
  check numpy "$out.txt" "$FIX/trec_numpy.py" "$ver" "usage=$out.usage,$out.trec-err"
}

for_each_python one
case "$RESULTS" in *"ok    one"*) ;; *) [ "$FAILS" -eq 0 ] && { printf '%s' "$RESULTS"; echo "no interpreter with numpy"; exit 77; } ;; esac
finish
