#!/usr/bin/env bash
# Allocation failure, swept from the command line: for the
# reader (trc-dump --check/--events/--summary) and every converter mode on
# small fixtures, count the allocations of a normal run
# (TRC_TEST_COUNT_ALLOCS=1, tools/common/startup.c), then run once more
# for every N in 1..count with TRC_TEST_FAIL_ALLOC=N (the Nth allocation
# and all later ones fail).  Each run must either
#   - succeed exactly like the normal run (same exit status, stderr and
#     output: the failed allocation was optional), or
#   - exit 2 with ONE stderr line "TOOL: error: ...out of memory", and
#     leave nothing in the output directory (no file, no temp file);
# never die of a signal.  Under the sanitizer build (TRC_ASAN set) a run
# must also leave no ASan/LSan/UBSan report: every failure path frees
# what it took.
# Every N is run (the fixtures are small: tens of allocations per run)
# except for trc2nvvp --svg, where libxml2 makes ~2600: there every N up
# to 400 and then every 7th (every 29th under the sanitizers).
# ALLOC_SWEEP_FULL=1 runs every N everywhere.
set -u
cd "${TRC_ROOT:-$(dirname "$0")/../..}"
BUILD=${BUILD:-build} BIN=${BIN:-bin}
. tests/e2e/lib/converters.sh
converters_built
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 runs=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
V=fixtures/valid G=fixtures/gpu/fake_train.trc
san=${TRC_ASAN:+1}
# Our own report files: a leak at N=17 is named as such, and run-all's
# per-test reports stay for the real failures.
saved_asan=${ASAN_OPTIONS:-} saved_ubsan=${UBSAN_OPTIONS:-}

# run MODE TOOL ARGS...: MODE "o" passes "-o $tmp/o/OUT", "svg" passes
# "--svg $tmp/o/OUT", "-" leaves stdout as the output.  Output in
# $tmp/o/OUT (or $tmp/stdout), stderr in $tmp/err, exit status in $rc.
run() {
  local mode=$1 t=$2; shift 2
  rm -rf "$tmp/o" "$tmp/stdout" "$tmp/err"; mkdir "$tmp/o"
  local out=()
  case $mode in o) out=(-o "$tmp/o/OUT") ;; svg) out=(--svg "$tmp/o/OUT") ;; esac
  "$BIN/$t" "${out[@]}" "$@" > "$tmp/stdout" 2> "$tmp/err"
  rc=$?
  runs=$((runs + 1))
}
result() { if [ "$1" = - ]; then cat "$tmp/stdout"; else cat "$tmp/o/OUT" 2> /dev/null; fi; }

# sweep MODE TOOL ARGS...
sweep() {
  local mode=$1 t=$2 what="$2 ${*:3}"
  [ "$mode" = svg ] && what="$t --svg OUT ${*:3}"
  TRC_TEST_COUNT_ALLOCS=1 run "$@"
  local rc0=$rc count
  count=$(sed -n "s/^$t: allocations: \([0-9]*\)$/\1/p" "$tmp/err")
  [ -n "$count" ] && [ "$count" -gt 0 ] || { bad "$what: no allocation count: $(head -c 300 "$tmp/err")"; return; }
  [ $rc0 -le 1 ] || { bad "$what: normal run exits $rc0: $(head -c 300 "$tmp/err")"; return; }
  grep -v "^$t: allocations: " "$tmp/err" > "$tmp/ref.err"
  result "$mode" > "$tmp/ref.out"
  [ -s "$tmp/ref.out" ] || { bad "$what: normal run wrote nothing"; return; }
  local step=1 dense=400 n=1 optional=0 failed=0
  if [ "$mode" = svg ] && [ -z "${ALLOC_SWEEP_FULL:-}" ]; then step=$([ "$san" ] && echo 29 || echo 7); fi
  while [ $n -le "$count" ]; do
    if [ "$san" ]; then
      rm -rf "$tmp/san"; mkdir "$tmp/san"
      export ASAN_OPTIONS="detect_leaks=1:exitcode=99:log_path=$tmp/san/asan"
      export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=99:log_path=$tmp/san/ubsan"
    fi
    TRC_TEST_FAIL_ALLOC=$n run "$@"
    local why=""
    if [ $rc -ge 128 ]; then
      why="killed by signal $((rc - 128))"
    elif [ $rc -eq "$rc0" ] && cmp -s "$tmp/err" "$tmp/ref.err" && result "$mode" | cmp -s - "$tmp/ref.out"; then
      optional=$((optional + 1))
    elif [ $rc -ne 2 ]; then
      why="exit $rc (want 2, or $rc0 with the normal output)"
    elif [ "$(wc -l < "$tmp/err")" -ne 1 ]; then
      why="want one stderr line, got $(wc -l < "$tmp/err")"
    elif ! grep -q "^$t: error: .*out of memory$" "$tmp/err"; then
      why="message does not say out of memory"
    elif [ -n "$(ls -A "$tmp/o")" ]; then
      why="left in the output directory: $(ls -A "$tmp/o" | tr '\n' ' ')"
    else
      failed=$((failed + 1))
    fi
    if [ "$san" ] && [ -n "$(ls -A "$tmp/san")" ]; then
      why="${why:+$why; }sanitizer report: $(cat "$tmp/san"/* | grep -m3 -E 'ERROR|SUMMARY|runtime error' | tr '\n' ' ')"
    fi
    if [ -n "$why" ]; then
      bad "$what, allocation $n of $count failing: $why"
      head -n 3 "$tmp/err" | sed 's/^/    /'
    fi
    if [ $n -ge $dense ]; then n=$((n + step)); else n=$((n + 1)); fi
  done
  echo "ok: $what: $count allocations, $failed failed cleanly, $optional optional"
  if [ "$san" ]; then export ASAN_OPTIONS=$saved_asan UBSAN_OPTIONS=$saved_ubsan; fi
}

start=$(date +%s)
# the reader, through trc-dump (the listing reads raw bytes: no reader)
sweep - trc-dump --check "$V/samples.trc"
sweep - trc-dump --check "$V/concat.trc"
sweep - trc-dump --check "$G"
sweep - trc-dump --events "$V/gpu.trc"
sweep - trc-dump --events "$V/extensions.trc"
sweep - trc-dump --summary "$V/compressed.trc"
sweep - trc-dump "$V/samples.trc"
# trc-top: its reading thread and a snapshot of a GPU trace
sweep - trc-top --once --since-start "$V/gpu.trc"
# damaged inputs (exit 1 normally): resynchronisation and loss paths
for f in flipped_payload_byte must_understand cut_then_concat bad_deflate undefined_ref; do
  sweep - trc-dump --check "fixtures/invalid/$f.trc"
done
sweep o trc2collapsed --idle fixtures/invalid/cut_then_concat.trc
sweep o trc2chrome fixtures/invalid/must_understand.trc
# each converter: its main modes
sweep o trc2collapsed "$V/samples.trc"
sweep o trc2collapsed --threads --pids --weight us "$V/concat.trc"
sweep o trc2collapsed --gpu "$G"
sweep o trc2collapsed --syncs "$G"
sweep o trc2collapsed --thread MainThread --thread 4243 --pid 4242 --from 0.002 --to 0.009 --idle "$V/samples.trc"
sweep o trc2flamegraph "$V/samples.trc"
sweep o trc2flamegraph --threads --pids --idle --weight us --icicle "$V/concat.trc"
sweep o trc2flamegraph --gpu "$G"
sweep o trc2flamegraph --syncs "$G"
sweep o trc2flamegraph --diff "$V/concat.trc" "$V/samples.trc"
sweep o trc-stats "$V/samples.trc"
sweep o trc-stats --callers . --callees . "$V/compressed.trc"
sweep o trc-stats --gpu "$G"
sweep o trc-stats --gpu-callsites "$G"
sweep o trc-stats --syncs "$G"
sweep o trc2pstats "$V/samples.trc"
sweep o trc2pstats --gpu "$G"
sweep o trc2pstats --syncs "$G"
# GPU idle time (lib/export/common/gpu_idle.c) in every view that shows it
sweep o trc2collapsed --gpu-idle --threads "$V/gpu.trc"
sweep o trc2pstats --gpu-idle "$V/gpu.trc"
sweep o trc-stats --gpu-idle "$V/gpu.trc"
sweep o trc2flamegraph --gpu-idle "$V/gpu.trc"
sweep o trc2speedscope --gpu-idle "$V/gpu.trc"
sweep o trc2chrome --gpu-busy-resolution 1 "$V/gpu.trc"
sweep o trc2speedscope "$V/samples.trc"
sweep o trc2speedscope --merge-threads --lines "$V/gpu.trc"
sweep o trc2speedscope "$G"
sweep o trc2speedscope --syncs "$G"
sweep o trc2chrome "$V/concat.trc"
sweep o trc2chrome --lines "$V/gpu.trc"
sweep o trc2chrome "$G"
sweep o trc2nvvp "$G"
sweep o trc2nvvp --csv --sort calls "$V/gpu.trc"
sweep o trc2nvvp --print-gpu-trace "$G"
sweep o trc2nvvp --print-api-trace --csv "$G"
sweep o trc2nvvp --print-gpu-trace --print-api-trace "$V/gpu.trc"
sweep svg trc2nvvp "$G"
sweep o trc-lines "$V/samples.trc"
sweep o trc-lines --function step --source-root demo.py=fixtures/workloads/lines_hot.py "$V/samples.trc"
sweep o trc-lines --json --idle "$G"
echo "$runs runs in $(( $(date +%s) - start )) s"

[ $fails -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "alloc_sweep: ok"
