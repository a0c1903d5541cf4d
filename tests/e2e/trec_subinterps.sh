#!/usr/bin/env bash
# A program with more idle subinterpreters (12) than trc used to
# remember (8): the main thread's stack must still be recorded, both
# when trec starts the program and when it attaches (--pid) after the
# subinterpreters exist (3.12: each has a state of the main thread's
# id; 3.13+: the newest interpreter, first in CPython's list, then has
# no thread state).  Interpreters without a
# subinterpreter module (before 3.12) are skipped.
# retry-once: records a live program against the clock (tests/run-all)
. "$(dirname "$0")/lib/trec_common.sh"

FIXTURE="$FIX/py_subinterps.py"
NSUB=12

# The main thread's samples: at least half of them in spin_main (the
# rest is start-up, making and destroying the subinterpreters), and its
# torn-stack losses (what an unknown interpreter made of every main
# interpreter stack) under a tenth.
check_spin() {
  awk -F'\t' -v what="$2" '
    $1 == "process" { pid = $2 }
    $1 == "sample" && $3 == pid { all += $5; if ($6 ~ /;spin_main\|[^;]*$/) spin += $5 }
    $1 == "loss" && $2 == 2 && $5 == pid { torn += $3 }
    END {
      if (all == 0 || spin * 2 < all || torn * 10 > all + torn) {
        printf "%s: %d of %d main-thread samples in spin_main, %d torn\n", what, spin, all, torn
        exit 1
      }
    }' "$1"
}

one() {
  local py=$1 ver=$2 tag=$3 rc=0 i
  "$py" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' ||
    { echo "CPython $ver has no subinterpreter module"; return 77; }
  mkdir -p "$TMPD/$tag"
  local out="$TMPD/$tag/run.trc"
  timeout 120 "$TREC" -q -o "$out" "$py" "$FIXTURE" 1.5 $NSUB || rc=$?
  [ $rc -eq 0 ] || { echo "trec exited $rc"; return 1; }
  dump_trace "$out" || return 1
  check_spin "$out.txt" "started by trec" || return 1

  # Attached after they exist.  3.12's subinterpreters each keep a
  # thread state with the id of the thread that made them (the main
  # thread's): of those the thread's own, its oldest, must be the one
  # sampled (lib/rec/target.c).  From 3.13 an idle subinterpreter has no
  # thread state.
  local ready="$TMPD/$tag/ready"
  "$py" "$FIXTURE" 4 $NSUB "$ready" &
  local target=$!
  for i in $(seq 100); do [ -e "$ready" ] && break; sleep 0.1; done
  [ -e "$ready" ] || { kill $target; echo "target never got ready"; return 1; }
  out="$TMPD/$tag/att.trc"
  rc=0
  timeout 60 "$TREC" -q --pid $target --duration 1 -o "$out" || rc=$?
  kill $target 2>/dev/null
  wait $target 2>/dev/null
  [ $rc -eq 0 ] || { echo "trec --pid exited $rc"; return 1; }
  dump_trace "$out" || return 1
  check_spin "$out.txt" "attached" || return 1
}

for_each_python one
finish
