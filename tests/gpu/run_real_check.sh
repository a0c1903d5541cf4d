#!/usr/bin/env bash
# The real-GPU check, in one command, for a machine with an NVIDIA GPU,
# PyTorch and a CUDA 13 CUPTI (docs/gpu.md, "The real check"):
#
#  1. preflight, printed: uname -r, trec --version (stops here with a
#     clear error when GPU support is off), ldd of the tools and of the
#     injection library, the NVIDIA driver version, the Python used (and
#     its torch), the libcupti.so.13 the injection would load with its
#     cuptiGetVersion (tests/gpu/real_preflight.py), and whether the
#     injection's launch-site capture reads that Python's stacks
#     (tests/gpu/pystack_probe.py);
#  2. the main check: tests/gpu/real_torch_check.py bare and under trec,
#     interleaved CHECK_RUNS times (default 5; the pair with the median
#     traced/bare ratio counts), judged by
#     tests/gpu/check_real_trace.py (kernel count and time against
#     torch.cuda.Event within 5 %, every activity correlated to its launch
#     and none starting more than 2 us before it (the worst printed),
#     >= 95 % of the forward kernels on the script's line, NVTX ranges, no
#     dropped or bad-timestamp records, overhead <= 5 % in every window
#     (the median over the runs of its traced/bare host time; the
#     pageable copies left out), the script's
#     .item() and .cpu() found by trc2collapsed --syncs at the lines it
#     reported, >= 99 % of the training step's GPU time with a Python
#     line; info lines: idle %, top idle stacks, the whole run's share);
#  3. the scenarios, tests/gpu/scenarios/*.py, each under trec and
#     `timeout`, each judged by tests/gpu/check_scenario.py from the
#     expectations on its first line; one that exits 77 says it cannot
#     run here (its last output line says why: SKIP).
#
# Every verdict is one line ("check ...", "scenario NAME: PASS|FAIL|SKIP
# ...", and last "verdict: PASS|FAIL|SKIP ..."), also in OUT/verdict.txt.
# OUT holds at most 7 files: summary.txt (everything printed),
# verdict.txt, run.trc (the main traced run), nvvp.txt (trc2nvvp),
# stats.txt (trc-stats --gpu), syncs.txt (trc-stats --syncs) and logs.tgz
# (the scratch directory's logs and JSON, no traces: what a failure needs
# to be read on a machine that gives back only a few files); the rest is
# kept in a temporary directory removed at the end.
#
# Usage: tests/gpu/run_real_check.sh [OUT]   (default $OUT, else a new
#        /tmp/trc-real-gpu-XXXXXX).  Run from anywhere; the tools are
#        found through BIN.
# Env: BIN (default bin), BUILD (default build), PY (default python3),
#      TREC (default $BIN/trec), CHECK_TIMEOUT (seconds per run, default
#      300), CHECK_RUNS (bare/traced pairs of the main workload, default 5).  Exit 0 pass, 1 fail (also when trec was built without GPU
#      support or cannot find libtrec-cupti.so), 77 no GPU usable from PY
#      (after the preflight and the scenarios that need no GPU).
set -u
BIN=${BIN:-bin} BUILD=${BUILD:-build} PY=${PY:-python3}
TREC=${TREC:-$BIN/trec}
T=${CHECK_TIMEOUT:-300}
out=${1:-${OUT:-$(mktemp -d /tmp/trc-real-gpu-XXXXXX)}}
here=$(cd "$(dirname "$0")" && pwd)
# absolute: the runs happen in a scratch directory
case $BIN in /*) ;; *) BIN=$PWD/$BIN ;; esac
case $TREC in /*) ;; */*) TREC=$PWD/$TREC ;; esac
mkdir -p "$out" || exit 1
out=$(cd "$out" && pwd)
work=$(mktemp -d /tmp/trc-real-work-XXXXXX) || exit 1
trap 'rm -rf "$work"' EXIT
: > "$out/verdict.txt"

verdict() {
  echo "$*"
  echo "$*" >> "$out/verdict.txt"
}

preflight() {
  local f inj
  echo "preflight: uname -r: $(uname -r)"
  echo "preflight: trec: $TREC"
  "$TREC" --version 2>&1 | sed 's/^/preflight: /'
  support=$("$TREC" --version 2>&1 | grep '^GPU support: ')
  case $support in
    "GPU support: built in"*) ;;
    *) verdict "verdict: FAIL (run_real_check: error: $TREC: ${support:-no 'GPU support:' line in trec --version}; nothing to check without it: docs/gpu.md, Building)"
       return 1 ;;
  esac
  inj=$(sed -n 's/.* found at \(.*\); libcupti.*/\1/p' <<< "$support")
  INJ=$inj
  for f in "$TREC" "$BIN/trc-dump" "$BIN/trc-stats" "$BIN/trc2nvvp" "$inj"; do
    echo "preflight: ldd $f:"
    ldd "$f" 2>&1 | sed 's/^[[:space:]]*/preflight:   /'
    if ldd "$f" 2>&1 | grep -q 'not found'; then
      echo "preflight: warning: $f needs a library this machine lacks"
    fi
  done
  if [ -r /proc/driver/nvidia/version ]; then
    echo "preflight: driver: $(head -1 /proc/driver/nvidia/version)"
  elif command -v nvidia-smi > /dev/null; then
    echo "preflight: driver: $(nvidia-smi --query-gpu=driver_version,name --format=csv,noheader 2>&1 | head -1)"
  else
    echo "preflight: driver: none (no /proc/driver/nvidia/version, no nvidia-smi)"
  fi
  GPU=1
  "$PY" "$here/real_preflight.py" > "$work/preflight.txt" 2>&1 || GPU=0
  cat "$work/preflight.txt"
  HAS_TORCH=1
  grep -q '^preflight: torch: not importable' "$work/preflight.txt" && HAS_TORCH=0
  grep -q '^preflight: python: ' "$work/preflight.txt" ||
    echo "preflight: python: $PY did not run real_preflight.py"
  local rc=0
  (cd "$work" && timeout -k 5 60 "$PY" "$here/pystack_probe.py" "$inj" "$work/probe.trc") \
    > "$work/probe.log" 2>&1 || rc=$?
  if [ $rc = 0 ]; then
    echo "preflight: launch-site stacks of $PY: read (tests/gpu/pystack_probe.py)"
  else
    echo "preflight: launch-site stacks of $PY: NOT read (pystack_probe.py exit $rc: $(tail -1 "$work/probe.log"))"
  fi
  return 0
}

# One scenario under trec; its verdict line from check_scenario.py.
scenario() {
  local s=$1 name needs rc=0 line
  name=$(basename "$s" .py)
  needs=$(sed -n '1s/.*needs=\([a-z]*\).*/\1/p' "$s")
  case $needs in
    cuda) [ "$GPU" = 1 ] || { verdict "scenario $name: SKIP (no GPU usable from $PY)"; return 0; } ;;
    torch) [ "$HAS_TORCH" = 1 ] || { verdict "scenario $name: SKIP (no torch in $PY)"; return 0; } ;;
  esac
  (cd "$work" && timeout -k 10 "$T" "$TREC" -q -o "$work/sc-$name.trc" "$PY" "$s") \
    > "$work/sc-$name.log" 2>&1 || rc=$?
  if [ $rc = 77 ]; then   # the scenario's own "cannot run here" (its last line says why)
    verdict "scenario $name: SKIP ($(tail -n 1 "$work/sc-$name.log" | cut -c1-160))"
    return 0
  fi
  line=$("$PY" "$here/check_scenario.py" "$s" "$rc" "$work/sc-$name.trc" "$BIN/trc-dump" 2>&1)
  verdict "$line"
  case $line in
    *": PASS "*) return 0 ;;
    *) tail -n 5 "$work/sc-$name.log" | sed "s/^/  $name: /"; return 1 ;;
  esac
}

# The main workload, bare and under trec, interleaved CHECK_RUNS times
# (default 5) so that load drifts hit both alike; the pair whose
# traced/bare wall-time ratio is the median counts: $work/{bare,traced}.json
# and $out/run.trc.
main_runs() {
  local i n=${CHECK_RUNS:-5}
  for i in $(seq 1 "$n"); do
    echo "== main: run $i of $n, bare"
    timeout -k 10 "$T" "$PY" "$here/real_torch_check.py" --out "$work/bare-$i.json" || return 1
    echo "== main: run $i of $n, under trec"
    timeout -k 10 "$T" "$TREC" -o "$work/traced-$i.trc" "$PY" "$here/real_torch_check.py" \
      --out "$work/traced-$i.json" || return 1
  done
  "$PY" - "$work" "$n" "$out" <<'PY'
import json, shutil, sys
work, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
wall = lambda tag, i: json.load(open("%s/%s-%d.json" % (work, tag, i)))["wall_s"]
pairs = sorted((wall("traced", i) / wall("bare", i), i) for i in range(1, n + 1))
print("overhead ratios, traced/bare per run: " + " ".join("%.3f" % r for r, _ in pairs))
i = pairs[(n - 1) // 2][1]
for tag in ("bare", "traced"):
    shutil.copy("%s/%s-%d.json" % (work, tag, i), "%s/%s.json" % (work, tag))
shutil.copy("%s/traced-%d.trc" % (work, i), "%s/run.trc" % out)
PY
}

main_check() {
  main_runs || { verdict "check main: FAIL (the workload failed, bare or under trec)"; return 1; }
  "$BIN/trc-dump" --check "$out/run.trc" || echo "note: trc-dump --check reported problems"
  "$BIN/trc-dump" -e "$out/run.trc" > "$work/run.events" || { verdict "check main: FAIL (trc-dump -e)"; return 1; }
  "$BIN/trc-stats" --gpu "$out/run.trc" > "$out/stats.txt" 2>&1 || true
  "$BIN/trc-stats" --syncs "$out/run.trc" > "$out/syncs.txt" 2>&1 || true
  "$BIN/trc2nvvp" "$out/run.trc" > "$out/nvvp.txt" 2>&1 || true
  if "$PY" "$here/check_real_trace.py" "$work/run.events" "$work/traced.json" "$work/bare.json" \
       --trace "$out/run.trc" --bin "$BIN" --runs "$work" "${CHECK_RUNS:-5}"; then
    verdict "check main: PASS (tests/gpu/check_real_trace.py)"
  else
    verdict "check main: FAIL (tests/gpu/check_real_trace.py, lines above)"
    return 1
  fi
}

all() {
  local failed=0 s
  preflight || return 1
  if [ "$GPU" = 1 ]; then
    main_check || failed=1
  else
    verdict "check main: SKIP (no GPU usable from $PY)"
  fi
  for s in "$here"/scenarios/*.py; do
    scenario "$s" || failed=1
  done
  if [ $failed = 1 ]; then
    verdict "verdict: FAIL (lines above)"
    return 1
  fi
  if [ "$GPU" = 0 ]; then
    verdict "verdict: SKIP (no GPU usable from $PY; preflight and the scenarios without CUDA ran)"
    return 77
  fi
  verdict "verdict: PASS"
}

all 2>&1 | tee "$out/summary.txt"
rc=${PIPESTATUS[0]}
(cd "$work" && find . -maxdepth 1 \( -name '*.log' -o -name '*.json' -o -name '*.txt' -o -name '*.events' \) -size -4M -print0 |
  tar czf "$out/logs.tgz" --null -T - 2>/dev/null) || rm -f "$out/logs.tgz"
echo "results in $out: $(cd "$out" && ls | tr '\n' ' ')"
exit "$rc"
