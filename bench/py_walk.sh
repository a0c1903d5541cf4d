#!/usr/bin/env bash
# bench/py_walk.sh — cost of one Python stack sample with lib/py's walker,
# under every CPython 3.8+ found, against fixtures/workloads/py_deep_spin.py
# (a thread spinning 30 frames deep):
#   - out of process (trec's path): $BUILD/py/py_walk_bench, as microseconds
#     and as multiples of the cheapest possible read of the same target;
#   - in process (the CUPTI injection's path): $BUILD/py/libpytest.so's
#     trc_pytest_bench, called through ctypes 30 frames deep.
# BENCH_QUICK=1 takes fewer samples.
set -u
cd "$(dirname "$0")/.."
build=${BUILD:-build}
bench=$build/py/py_walk_bench
lib=$build/py/libpytest.so
n=20000; [ -n "${BENCH_QUICK:-}" ] && n=2000
[ -x "$bench" ] || { echo "py_walk: $bench missing (make bench builds it)"; exit 1; }
pythons="/usr/bin/python3 $(ls -d "${PYENV_ROOT:-/root/.pyenv}"/versions/3.*/bin/python3 2>/dev/null)"
for py in $pythons; do
  case $py in */3.6*|*/3.7*) continue ;; esac
  [ -x "$py" ] || continue
  echo "--- $py"
  fifo=$(mktemp -u); mkfifo "$fifo"
  "$py" fixtures/workloads/py_deep_spin.py 30 > "$fifo" &
  pid=$!
  read -r -t 30 line < "$fifo"
  rm -f "$fifo"
  "$bench" "$pid" "$n"
  kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
  if [ -f "$lib" ]; then
    "$py" - "$lib" <<'PY'
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
lib.trc_pytest_bench.restype = ctypes.c_double
def down(n):
    return lib.trc_pytest_bench(20000) if n <= 1 else down(n - 1)
ns = down(30)
print("in process (self, 30 frames): p50 %.2f us" % (ns / 1e3))
PY
  fi
done
