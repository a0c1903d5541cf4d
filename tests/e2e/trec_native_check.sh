#!/usr/bin/env bash
# The on-CPU estimate of tests/e2e/lib/native_check.py (the check of
# trec_native_threads.sh) on synthetic traces with a known answer, so
# that its scaling for skipped ticks is itself tested:
#  - skipped ticks that fell before a thread existed (trec starved at
#    start-up) are not charged to it: a thread sampled at every tick of
#    its life passes, where scaling by the process's skipped ticks put
#    it 20 % over its runnable time;
#  - ticks skipped inside a thread's life are: its samples alone are
#    under its CPU time, scaled they are not;
#  - a thread with more on-CPU samples than its runnable time fails.
set -u
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
CHECK="$(cd "$(dirname "$0")" && pwd)/lib/native_check.py"
TMPD=$(mktemp -d)
trap 'rm -rf "$TMPD"' EXIT

# make_case DIR SPIN_FIRST_MS SPIN_SAMPLES SPIN_RUNNABLE_S: a 1 kHz trace
# of 1800 ms where trec skipped 300 ticks (all in the main thread's
# first 300 ms), spin_native sampled on CPU SPIN_SAMPLES times from
# SPIN_FIRST_MS to 1799 ms, and the truth the program measured.
make_case() {
  "$PY" - "$@" <<'EOF'
import json, sys
d, first, n, runnable = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
ms = 1000000
L = ["segment\ttrec 0.1.0\t1000000\tsynthetic",
     "thread\t1\t100\t100\tMainThread", "thread\t2\t100\t101\tspin_native",
     "thread\t3\t100\t102\tidle_native", "thread\t4\t100\t103\tboth_native",
     "loss\t1\t300\t0\t-1\tticks skipped: the recorder fell behind",
     "sample\t100\t100\t1\t1500\tmain|w.py|1|1",
     "sample\t100\t101\t1\t%d\t[native thread spin_native]|<native>|0|0" % n,
     "sample\t100\t102\t0\t1400\t[native thread idle_native]|<native>|0|0",
     "sample\t100\t103\t1\t200\t[native thread both_native]|<native>|0|0",
     "sample\t100\t103\t1\t200\tpy_in_native|w.py|5|5",
     "span\t100\t100\t0\t%d\t1500" % (1799 * ms),
     "span\t100\t101\t%d\t%d\t%d" % (first * ms, 1799 * ms, n),
     "span\t100\t102\t%d\t%d\t1400" % (400 * ms, 1799 * ms),
     "span\t100\t103\t%d\t%d\t400" % (1300 * ms, 1699 * ms)]
open(d + "/t.txt", "w").write("\n".join(L) + "\n")
cpu = {"main": 1.75, "spin_native": min(runnable, 1.75), "idle_native": 0.0, "both_native": 0.4}
threads = {"main": {"tid": 100, "cpu": cpu["main"], "runnable": 1.8},
           "spin_native": {"tid": 101, "cpu": cpu["spin_native"], "runnable": runnable},
           "idle_native": {"tid": 102, "cpu": 0.0, "runnable": 0.0},
           "both_native": {"tid": 103, "cpu": 0.4, "runnable": 0.4}}
json.dump({"process_cpu": sum(cpu.values()), "threads": threads, "both_python_cpu": 0.2},
          open(d + "/t.json", "w"))
EOF
}

fails=0
expect() {   # expect pass|fail NAME DIR
  local want=$1 name=$2 d=$3 rc=0
  "$PY" "$CHECK" "$d/t.txt" "$d/t.json" >"$d/out" 2>&1 || rc=$?
  if { [ "$want" = pass ] && [ $rc -eq 0 ]; } || { [ "$want" = fail ] && [ $rc -eq 1 ]; }; then
    echo "ok    $name"
  else
    echo "FAIL  $name (check exited $rc, want $want):"
    sed 's/^/      /' "$d/out"
    fails=$((fails + 1))
  fi
}

# spin_native lives from 800 ms, after the skipped ticks: 1000 samples
# for 1000 ms runnable (scaling by the process: 1.2 s)
mkdir "$TMPD/a" && make_case "$TMPD/a" 800 1000 1.0 && expect pass "skipped ticks before a thread's life" "$TMPD/a"
# it lives from 0 ms and lost the 300 skipped ticks: 1500 samples, 1.8 s
mkdir "$TMPD/b" && make_case "$TMPD/b" 0 1500 1.8 && expect pass "skipped ticks inside a thread's life" "$TMPD/b"
# 1000 on-CPU samples in 1000 ms of life, runnable only 0.8 s
mkdir "$TMPD/c" && make_case "$TMPD/c" 800 1000 0.8 && expect fail "more on-CPU samples than runnable time" "$TMPD/c"
[ $fails -eq 0 ] || exit 1
echo "all passed"
