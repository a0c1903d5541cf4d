#!/usr/bin/env bash
# Hostile targets: a program that exits (os._exit) while trec
# samples it at 10 kHz, repeatedly; thousands of threads that start and
# end while sampled; a process ended from a short thread mid-churn.
# Each time: trec does not crash, passes the program's exit status on,
# the trace is intact (trc-dump --check), the summary's sample and
# invalid counts are the trace's own, and no frame is invented.  Every
# interpreter found.
# retry-once: records a live program against the clock (tests/run-all)
. "$(dirname "$0")/lib/trec_common.sh"
. "$(dirname "$0")/lib/hostile_common.sh"

W="$FIX/hostile_exit.py"
REPEAT=3 CHURN=1.0
[ $ASAN = 1 ] && { REPEAT=1; CHURN=0.5; }

# run TAG EXPECTED_RC RATE ARGS...: record, then check everything
run() {
  local tag=$1 want=$2 rate=$3 rc=0
  shift 3
  local out="$TMPD/$tag.trc"
  timeout 120 "$TREC" -r "$rate" -o "$out" "$@" 2>"$out.stderr" || rc=$?
  [ $rc -eq "$want" ] || { echo "$tag: trec exited $rc, want $want"; cat "$out.stderr"; return 1; }
  if grep -q "AddressSanitizer\|runtime error" "$out.stderr"; then
    echo "$tag: sanitizer report"; cat "$out.stderr"; return 1
  fi
  "$DUMP" --check "$out" >"$out.check" 2>&1 || { echo "$tag: trc-dump --check failed"; cat "$out.check"; return 1; }
  dump_trace "$out" || return 1
  hcheck exit "$out.txt" "$out.stderr" "$W" "$VER" || { echo "$tag: checks failed"; return 1; }
}

one() {
  local py=$1 tag=$3 k
  VER=$2
  for k in $(seq $REPEAT); do
    run "$tag-exit$k" $((40 + k)) 10000 "$py" "$W" exit $((40 + k)) 0.3 || return 1
  done
  run "$tag-churn" 0 5000 "$py" "$W" churn "$CHURN" || return 1
  run "$tag-churnexit" 7 5000 "$py" "$W" churn_exit 7 "$CHURN" || return 1
}

for_each_python one
finish
