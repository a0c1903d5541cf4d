#!/usr/bin/env bash
# Fidelity on deep, fast-changing stacks, against the truth measured
# inside the program (tests/e2e/lib/inproc_sampler.py, a SIGALRM sampler
# walking f_back; for the many calls' functions also sigstack_ref.py,
# whose handler is C), on every interpreter: a recursion whose depth changes
# every few microseconds between 0 and 60 frames, many small calls
# through library-like code, generators/coroutines driven from C, and
# sympy (a real library: integrate and simplify) where it is installed.
# Checks: ticks lost to torn reads, the share of samples per depth
# decile and per function on the stack, and no empty stack inside a
# thread's run (lib/py/py_walk.c).
# retry-once: records a live program against the clock (tests/run-all)
. "$(dirname "$0")/lib/trec_common.sh"

SECS=${TREC_FIDELITY_SECONDS:-3}

record() {   # record PY TAG WORKLOAD TREC-FLAGS CHECKS...
  local py=$1 tag=$2 w=$3 flags=$4 rc=0
  shift 4
  local name="$w${flags:+ $flags}" out="$TMPD/$tag/$w$flags.trc" ref="$TMPD/$tag/$w$flags.ref.json"
  PYTHONPATH="$TRC_ROOT/tests/e2e/lib" timeout 120 "$TREC" -q $flags -o "$out" "$py" "$FIX/fidelity_$w.py" "$ref" "$SECS" || rc=$?
  [ $rc -eq 0 ] || { echo "$name: trec exited $rc"; return 1; }
  TRC_STACKS_ROOT=main@fidelity_ dump_trace "$out" || return 1
  echo "== $name"
  "$CHECK_PY" "$TRC_ROOT/tests/e2e/lib/fidelity_check.py" "$out.txt" "$ref" "$@"
}

# csig_ref PY TAG: the C-handler reference (tests/e2e/lib/sigstack_ref.py)
# for the many-calls workload, in a run of its own (2 s, no trec), built
# against PY's own headers; prints its JSON's path, or says why there is
# none (no headers: Debian's python3 has them with python3-dev) and
# fails.
csig_ref() {
  local py=$1 dir="$TMPD/$2/csig" inc suf
  mkdir -p "$dir"
  inc=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["include"])') &&
    suf=$("$py" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))') || return 1
  if [ ! -f "$inc/Python.h" ]; then
    echo "(no CPython headers in $inc: functions not checked against the C-handler reference)" >&2
    return 1
  fi
  cc -shared -fPIC -O2 -Wall -Wextra -Werror -I "$inc" -o "$dir/_sigstack$suf" \
    "$TRC_ROOT/tests/e2e/lib/sigstack.c" >&2 || { echo "calls: cannot build the C-handler reference" >&2; return 2; }
  PYTHONPATH="$dir:$TRC_ROOT/tests/e2e/lib" timeout 60 "$py" "$TRC_ROOT/tests/e2e/lib/sigstack_ref.py" \
    "$FIX/fidelity_calls.py" "$dir/calls.json" 2 >&2 || { echo "calls: the C-handler reference failed" >&2; return 2; }
  echo "$dir/calls.json"
}

# The bounds are what holds on this 2-CPU VM in every run, quiet or
# loaded (docs/trec.md "Consistent stacks" has the figures).  The
# reference's handler runs only where the interpreter checks for
# signals, a little after the signal came: on the recursion that can
# move a sample a level or two, and in generator and many-call code a
# few points of share between callers and callees (on the many calls
# it charges Node.__init__ with the C work of making a node: 6 to 12 %
# where the C-handler reference, which reads the frames at the
# signal's instant, has 1 to 4 %).  So per-function shares are checked
# against that one on the many calls (functions at 1 % or more), and
# against the Python handler on the recursion only.  trec's shares
# were within 0.5 to 2.5 points of the C handler's in 24 runs at load
# average 3 to 7 (within 2 in 19; 3.8-3.13), where each figure, from
# 1,000 to 3,000 samples, carries a point of sampling noise.  On a
# quiet machine (load average 1 to 3), where trec reads beside the
# running program, it misses short functions called from C: arity at
# 0.4 % where the C handler has 3.5 % (3.12), up to 3.2 points off from
# 3.11; before 3.11 up to 5.3 (evaluate, 3.8; __init__ and arity
# nearly gone in that run).  Asserted at 4 from 3.11 and 7 before.
#
# What is asserted is what trec claims (docs/trec.md): no empty stack
# inside a thread's run; few torn reads; the recursion's depths right
# without stopping.  Before 3.11 frames are heap objects freed and
# reused the moment a call returns, and a recursion this fast (a call
# every few hundred nanoseconds) is harder to read whole from outside:
# with the frames it cycles through planned into the read (lib/py/
# py_plan.c) 0.1 to 1.0 % of ticks are torn and depth deciles are
# within 0.8 to 4.2 points on 3.8-3.10 (load average 5 to 9; functions
# within 3.4 in every run of this and earlier plans): asserted at 3, 8
# and 5, room for a load spike.  Many small calls through generators: depth
# deciles mostly within 0.4 to 8.4 points of the reference, but trec
# still leans shallow there at times: 10.9 and 11.5 points on 3.13.0
# (one run loaded, one quiet), 16 to 23 on 3.8-3.10 in a run beside a
# parallel build, and read beside the running program (a quiet
# machine) 9 to 25 points and 3 to 8 % torn before 3.11, up to 12.6
# points from 3.11: asserted at 15 on 3.11+ and printed before 3.11 (the
# limit of 100), the open part of docs/trec.md's figures.
# --blocking is not measured here: the reference's own timer signal
# stops a traced program until trec's next tick passes it on, which
# moves where the program spends its time (tests/e2e/trec_blocking.sh
# checks --blocking).
one() {
  local py=$1 ver=$2 tag=$3 bad=0 calls_torn=5 calls_depth=15 calls_incl=4,1
  mkdir -p "$TMPD/$tag"
  case "$ver" in
    3.8.* | 3.9.* | 3.10.*)
      calls_torn=15 calls_depth=100 calls_incl=7,1
      # A sanitizer build reads each stack several times slower, so on
      # heap frames its figures say little about trec's: printed only.
      if [ -n "${TRC_ASAN:-}" ]; then
        calls_incl=100,1
        record "$py" "$tag" deep "" torn=100 depth=100 incl=100 stackless=0 || bad=1
      else
        record "$py" "$tag" deep "" torn=3 depth=8 incl=5 stackless=0 || bad=1
      fi ;;
    *)
      record "$py" "$tag" deep "" torn=1.5 depth=7 incl=4 stackless=0 || bad=1 ;;
  esac
  record "$py" "$tag" calls "" "torn=$calls_torn" "depth=$calls_depth" stackless=0 || bad=1
  local csig rc=0
  csig=$(csig_ref "$py" "$tag" 2>"$TMPD/$tag/csig.err") || rc=$?
  cat "$TMPD/$tag/csig.err"
  if [ $rc -eq 0 ]; then
    echo "== calls, functions against the C-handler reference"
    "$CHECK_PY" "$TRC_ROOT/tests/e2e/lib/fidelity_check.py" "$TMPD/$tag/calls.trc.txt" "$csig" "incl=$calls_incl" || bad=1
  elif [ $rc -eq 2 ]; then
    bad=1
  fi
  record "$py" "$tag" gen "" torn=3 stackless=0 || bad=1
  if "$py" -c "import sympy" 2>/dev/null; then
    record "$py" "$tag" sympy "" torn=1.5 depth=5 stackless=0 || bad=1
  else
    echo "(no sympy for $ver: python3-sympy is Debian's)"
  fi
  return $bad
}

for_each_python one
# every figure, passed or not: the measured fidelity on this machine
for f in "$TMPD"/one-*.log; do echo "---- ${f##*/one-}"; grep -v '^samples' "$f"; done
finish
