#!/usr/bin/env bash
# Attribution via a waiting thread, end to end under the real trec over
# the fake CUPTI (tests/gpu/fake_native_launch.c, tests/gpu/via_thread.py):
# a thread started in C, with no Python frames, launches 40 kernels of
# 1 ms, 10 ms apart, while the Python main thread waits in backward()
# (via_thread.py:15) for it.  trc-stats --gpu-callsites must charge every
# kernel to that line via the launching thread, and its share line must
# say that all the GPU time has a line, via a waiting thread.  Then the
# same with two Python threads off CPU: a "trainer" thread waits in
# backward() while the main thread (met first) polls it in idle_wait()'s
# time.sleep: the kernels go to the trainer's backward(), never to
# idle_wait().
# retry-once: records a live program against the clock
. "$(dirname "$0")/lib/fake_launch_common.sh"

# check MODE ROOT: record via_thread.py in MODE ("" or trainer), check the
# views; ROOT the folded frames above train_step.
check() {
  local mode=$1 root=$2 rc=0 src=0
  "$BIN/trec" -o "$tmp/out.trc" "$py" tests/gpu/via_thread.py "$(realpath "$fake")" 40 10 $mode \
    >"$tmp/out" 2>"$tmp/err" || rc=$?
  cat "$tmp/out" "$tmp/err"
  [ $rc -eq 0 ] || { echo "FAIL ($mode): exit status $rc"; exit 1; }
  "$BIN/trc-dump" --check "$tmp/out.trc" || { echo "FAIL ($mode): merged trace does not check clean"; exit 1; }
  "$BIN/trc-stats" --gpu-callsites "$tmp/out.trc" >"$tmp/sites" || src=$?
  cat "$tmp/sites"
  # 0, or 1 with the one warning that the loaded machine missed ticks
  [ $src -eq 0 ] || { [ $src -eq 1 ] && grep -q 'samples missed\|taken late' "$tmp/sites" ; } ||
    { echo "FAIL ($mode): trc-stats exit status $src"; exit 1; }
  grep -qx 'launched:   40 with a Python stack (40 a waiting thread'"'"'s), 0 without (<no Python stack>), 0 unmatched (<unknown launch>)' "$tmp/sites" ||
    { echo "FAIL ($mode): want all 40 launches charged via a waiting thread"; exit 1; }
  grep -qx 'lines:      100.00% of GPU time has a Python line (direct 0.00%, via a waiting thread 100.00%, none 0.00%)' "$tmp/sites" ||
    { echo "FAIL ($mode): share line"; exit 1; }
  grep -Eq '^ +40 +0\.000000 +0\.000000 +0\.040000 +0\.001000 .*tests/gpu/via_thread\.py:14\(backward\)$' "$tmp/sites" ||
    { echo "FAIL ($mode): want the 40 ms of kernels under backward()"; exit 1; }
  # the line, and who launched: the folded view names the waiting line and
  # the launching thread, a thread of the program that is not its main one
  "$BIN/trc2collapsed" --gpu "$tmp/out.trc" >"$tmp/folded" 2>/dev/null
  cat "$tmp/folded"
  local pid tid
  pid=$(sed -n 's/^processes:  1: via_thread.py (pid \([0-9]*\))$/\1/p' "$tmp/sites")
  [ -n "$pid" ] || { echo "FAIL ($mode): no pid"; exit 1; }
  [ "$(grep -c '' "$tmp/folded")" -eq 1 ] || { echo "FAIL ($mode): want one folded line"; exit 1; }
  grep -Eq "^${root#^};train_step \(gpu/via_thread\.py:19\);backward \(gpu/via_thread\.py:15\);\[via thread [0-9]+ [^]]*\];backward_kernel 40000$" "$tmp/folded" ||
    { echo "FAIL ($mode): want the kernels under backward at via_thread.py:15, via the launching thread"; exit 1; }
  tid=$(sed -n 's/.*\[via thread \([0-9]*\) .*/\1/p' "$tmp/folded")
  [ "$tid" != "$pid" ] || { echo "FAIL ($mode): the launching thread is the main thread"; exit 1; }
  echo "ok ($mode): 40 kernels from thread $tid charged to backward (via_thread.py:15) of pid $pid"
}

check "" '<module> \(gpu/via_thread\.py:36\)'
# a thread's own frames above its target: threading's bootstrap (named
# Thread._bootstrap from 3.11)
check trainer '^[^;]*_bootstrap \(threading\.py:[0-9]+\);[^;]*_bootstrap_inner \(threading\.py:[0-9]+\);[^;]*run \(threading\.py:[0-9]+\)'
