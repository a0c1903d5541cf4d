#!/usr/bin/env bash
# bench/py_walk.sh — cost of one Python stack sample with lib/py's walker,
# under every CPython 3.8+ found, against fixtures/workloads/py_deep_spin.py
# (a thread spinning 30 frames deep):
#   - out of process (trec's path): $BUILD/py/py_walk_bench, as microseconds
#     and as multiples of the cheapest possible read of the same target;
#   - in process (the CUPTI injection's path): $BUILD/py/libpytest.so's
#     trc_pytest_bench, called through ctypes 30 frames deep.
# BENCH_QUICK=1 takes fewer samples.  Under bench/run-all each figure also
# goes to $BENCH_RESULTS (group py_walk, names prefixed by the version).
set -u
cd "$(dirname "$0")/.."
. bench/lib.bash
build=${BUILD:-build}
bench=$build/py/py_walk_bench
lib=$build/py/libpytest.so
n=20000; [ -n "${BENCH_QUICK:-}" ] && n=2000
[ -x "$bench" ] || { echo "py_walk: $bench missing (make bench builds it)"; exit 1; }
. tests/e2e/lib/pythons.sh   # trec_pyenv_root: $PYENV_ROOT or `pyenv root`
pyenv_root=$(trec_pyenv_root) || pyenv_root=""
pythons="/usr/bin/python3 ${pyenv_root:+$(ls -d "$pyenv_root"/versions/3.*/bin/python3 2>/dev/null)}"
for py in $pythons; do
  case $py in */3.6*|*/3.7*) continue ;; esac
  [ -x "$py" ] || continue
  echo "--- $py"
  fifo=$(mktemp -u); mkfifo "$fifo"
  "$py" fixtures/workloads/py_deep_spin.py 30 > "$fifo" &
  pid=$!
  read -r -t 30 line < "$fifo"
  rm -f "$fifo"
  out=$("$bench" "$pid" "$n")
  printf '%s\n' "$out"
  # the same ticks 0.9 ms apart, as trec takes them at 1 kHz: what a
  # wake-up with cold caches adds to the very same work
  napped=$("$bench" "$pid" $((n / 10)) 900 | grep '^tick' | sed 's/^tick (threads+stacks):/tick, 0.9 ms apart:  /')
  printf '%s\n' "$napped"
  kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
  # "CPython 3.11.2, ..." then "tick (threads+stacks):   p50   6.81 us  p90 ..."
  v=$(sed -n 's/^CPython \([0-9.]*\),.*/\1/p' <<< "$out" | head -1)
  v=${v:-unknown}
  bench_result py_walk "$v napped tick p50" "$(sed -n 's/.* p50 *\([0-9.]*\) us.*/\1/p' <<< "$napped")" us \
    "the same ticks 0.9 ms apart (cold caches, as at 1 kHz), $((n / 10)) ticks"
  bench_result py_walk "$v pages per tick" "$(sed -n 's/.*pages per tick \([0-9.]*\).*/\1/p' <<< "$out")" pages \
    "target pages one tick's read touches (each costs about 0.9 us after a sleep here)"
  for what in floor tick; do
    line=$(grep "^$what" <<< "$out" | head -1)
    for q in p50 p99; do
      bench_result py_walk "$v $what $q" "$(sed -n "s/.* $q *\([0-9.]*\) us.*/\1/p" <<< "$line")" us \
        "out of process, 30 frames, $n ticks$([ $what = floor ] && echo ', one 64 B read')"
    done
  done
  if [ -f "$lib" ]; then
    self=$("$py" - "$lib" <<'PY'
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
lib.trc_pytest_bench.restype = ctypes.c_double
def down(n):
    return lib.trc_pytest_bench(20000) if n <= 1 else down(n - 1)
ns = down(30)
print("%.2f" % (ns / 1e3))
PY
)
    echo "in process (self, 30 frames): p50 $self us"
    bench_result py_walk "$v self p50" "$self" us "in process (CUPTI injection's path), 30 frames"
  fi
done
