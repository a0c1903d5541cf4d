#!/usr/bin/env bash
# Fidelity on deep, fast-changing stacks, against the truth measured
# inside the program (tests/e2e/lib/inproc_sampler.py, a SIGALRM sampler
# walking f_back), on every interpreter: a recursion whose depth changes
# every few microseconds between 0 and 60 frames, many small calls
# through library-like code, generators/coroutines driven from C, and
# sympy (a real library: integrate and simplify) where it is installed.
# Checks: ticks lost to torn reads, the share of samples per depth
# decile and per function on the stack, and no empty stack inside a
# thread's run (lib/py/py_walk.c).
# retry-once: records a live program against the clock (tests/run-all)
. "$(dirname "$0")/lib/trec_common.sh"

SECS=${TREC_FIDELITY_SECONDS:-3}

record() {   # record PY TAG WORKLOAD CHECKS...
  local py=$1 tag=$2 w=$3 rc=0
  shift 3
  local out="$TMPD/$tag/$w.trc" ref="$TMPD/$tag/$w.ref.json"
  PYTHONPATH="$TRC_ROOT/tests/e2e/lib" timeout 120 "$TREC" -q -o "$out" "$py" "$FIX/fidelity_$w.py" "$ref" "$SECS" || rc=$?
  [ $rc -eq 0 ] || { echo "$w: trec exited $rc"; return 1; }
  TRC_STACKS_ROOT=main@fidelity_ dump_trace "$out" || return 1
  echo "== $w"
  "$CHECK_PY" "$TRC_ROOT/tests/e2e/lib/fidelity_check.py" "$out.txt" "$ref" "$@"
}

# Bounds: what this 2-CPU, shared VM holds in every run (docs/trec.md
# "Consistent stacks" has the figures).  Before 3.11 frames are heap
# objects read one by one, and a recursion this fast still tears more
# reads than the 3.11+ data stack does; the bounds there are the ones
# the old reader broke by far (a third to a half of ticks torn, the
# shallowest decile 30 to 40 points too large).  The per-function check
# runs on the recursion only: the reference's signal handler runs only
# where the interpreter checks for signals, which in generator and
# many-call code shifts its own shares between callers and callees.
one() {
  local py=$1 ver=$2 tag=$3 bad=0 torn=1.5 depth=5
  case "$ver" in 3.8.* | 3.9.* | 3.10.*) torn=20 depth=12 ;; esac
  mkdir -p "$TMPD/$tag"
  record "$py" "$tag" deep "torn=$torn" "depth=$depth" incl=4 stackless=0 || bad=1
  record "$py" "$tag" calls "torn=$torn" "depth=$depth" stackless=0 || bad=1
  record "$py" "$tag" gen "torn=$torn" stackless=0 || bad=1
  if "$py" -c "import sympy" 2>/dev/null; then
    record "$py" "$tag" sympy "torn=$torn" "depth=$depth" stackless=0 || bad=1
  else
    echo "(no sympy for $ver: python3-sympy is Debian's)"
  fi
  return $bad
}

for_each_python one
# every figure, passed or not: the measured fidelity on this machine
for f in "$TMPD"/one-*.log; do echo "---- ${f##*/one-}"; grep -v '^samples' "$f"; done
finish
