#!/usr/bin/env bash
# tests/gpu/run_real_check.sh runs end to end on a machine without a GPU,
# from a relocated copy of the tools, against a stub Python (a logging
# wrapper around an interpreter without torch):
#   - the preflight prints every line docs/gpu.md lists, and the copy's
#     own injection library (found relative to the copied trec) is the
#     one named and ldd'ed;
#   - the main check and every scenario needing CUDA or torch say SKIP
#     (one line each) and are never run; the scenario without CUDA runs
#     under trec and passes;
#   - exit 77, "verdict: SKIP" last, at most 8 files in OUT;
#   - the scenario judge (tests/gpu/check_scenario.py) counts right on the
#     fake-CUPTI fixture and fails wrong expectations;
#   - a trec without GPU support stops the check with a clear error, exit 1.
set -u
cd "${TRC_ROOT:-$(dirname "$0")/../..}"
root=$PWD
BUILD=${BUILD:-build} BIN=${BIN:-bin}
[ -f "$BUILD/libtrec-cupti.so" ] || { echo "skip: libtrec-cupti.so not built (no CUDA headers)"; exit 77; }
[ -z "${TRC_ASAN:-}" ] || { echo "skip: sanitizer build: the injection cannot be loaded into an uninstrumented Python"; exit 77; }
case $BIN$BUILD in /*) echo "skip: BIN and BUILD must be relative to copy the tree's layout"; exit 77 ;; esac
. tests/e2e/lib/pythons.sh
real=""
while read -r p v; do
  "$p" -c 'import torch' > /dev/null 2>&1 && continue
  real=$p
  break
done < <(trec_pythons)
[ -n "$real" ] || { echo "skip: no Python without torch found"; exit 77; }
fail=0
bad() { echo "FAIL: $*"; fail=1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset TREC_CUPTI_INJECTION CUDA_INJECTION64_PATH NVTX_INJECTION64_PATH TREC_GPU_DIR OUT

# The stub: logs each command line, then runs the real interpreter.
mkdir -p "$tmp/stub"
cat > "$tmp/stub/python3" <<EOF
#!/bin/sh
echo "\$*" >> "$tmp/stub/calls"
exec "$real" "\$@"
EOF
chmod +x "$tmp/stub/python3"

# The tools and the injection library in a copy of the build tree's layout.
mkdir -p "$tmp/tree/$BIN" "$tmp/tree/$BUILD"
for t in trec trc-dump trc-stats trc2nvvp; do cp "$BIN/$t" "$tmp/tree/$BIN/" || exit 1; done
cp "$BUILD/libtrec-cupti.so" "$tmp/tree/$BUILD/" || exit 1
lib=$(realpath "$tmp/tree/$BUILD/libtrec-cupti.so")

rc=0
(cd "$tmp" && BIN="$tmp/tree/$BIN" PY="$tmp/stub/python3" CHECK_TIMEOUT=60 \
  timeout 120 bash "$root/tests/gpu/run_real_check.sh" "$tmp/out") > "$tmp/stdout" 2>&1 || rc=$?
cat "$tmp/stdout"
[ $rc = 77 ] || bad "exit $rc, want 77 (no GPU)"
s=$tmp/out/summary.txt
[ -f "$s" ] || { echo "FAIL: no summary.txt in OUT"; exit 1; }
cmp -s "$s" <(sed '$d' "$tmp/stdout") || bad "summary.txt is not what was printed"
for want in '^preflight: uname -r: ' "^preflight: GPU support: built in, .* found at $lib;" \
  "^preflight: ldd $tmp/tree/$BIN/trec:" "^preflight: ldd $tmp/tree/$BIN/trc-dump:" \
  "^preflight: ldd $tmp/tree/$BIN/trc-stats:" "^preflight: ldd $tmp/tree/$BIN/trc2nvvp:" \
  "^preflight: ldd $lib:" '^preflight:   libc\.so' '^preflight: driver: ' \
  "^preflight: python: $real " '^preflight: torch: not importable' '^preflight: CUPTI: ' \
  '^preflight: launch-site stacks of .*: read '; do
  grep -q -- "$want" "$s" || bad "summary lacks /$want/"
done
grep -q 'needs a library this machine lacks' "$s" && bad "a copied tool misses a library: $(grep -B1 'lacks' "$s")"

v=$tmp/out/verdict.txt
n_sc=$(ls tests/gpu/scenarios/*.py | wc -l)
[ "$(grep -c '^scenario ' "$v")" = "$n_sc" ] || bad "want one verdict line per scenario ($n_sc): $(cat "$v")"
grep -qx 'check main: SKIP (no GPU usable from .*)' "$v" || bad "no SKIP line for the main check"
grep -q '^scenario no_cuda: PASS (kernels=0 launch_stacks=0 samples=[1-9]' "$v" || bad "no_cuda did not pass: $(grep no_cuda "$v")"
[ "$(grep -c '^scenario [a-z_]*: SKIP (no GPU usable from' "$v")" = "$(grep -l '^# expect:.*needs=cuda' tests/gpu/scenarios/*.py | wc -l)" ] ||
  bad "every CUDA scenario must say SKIP"
grep -q '^scenario import_torch: SKIP (no torch in ' "$v" || bad "import_torch without torch must say SKIP"
grep -vE '^(check main|scenario [a-z_]+|verdict): (PASS|FAIL|SKIP)' "$v" && bad "a verdict line of another form"
tail -n 1 "$v" | grep -q '^verdict: SKIP ' || bad "last verdict line: $(tail -n 1 "$v")"
[ "$(ls -A "$tmp/out" | wc -l)" -le 8 ] || bad "more than 8 files in OUT: $(ls "$tmp/out")"
# what the stub ran: the preflight, the probe, no_cuda under trec; no CUDA scenario
grep -q 'real_preflight.py' "$tmp/stub/calls" || bad "preflight not run by PY"
grep -q 'pystack_probe.py' "$tmp/stub/calls" || bad "stack probe not run by PY"
grep -q 'scenarios/no_cuda.py' "$tmp/stub/calls" || bad "no_cuda.py not run by PY"
for s in $(grep -l '^# expect:.*needs=\(cuda\|torch\)' tests/gpu/scenarios/*.py); do
  grep -q "scenarios/$(basename "$s")" "$tmp/stub/calls" && bad "$(basename "$s") run without a GPU"
done
grep -q 'real_torch_check.py' "$tmp/stub/calls" && bad "the main workload run without a GPU"

# The scenario judge on a GPU trace of known content (the fake-CUPTI
# fixture: 4 kernels, 9 launch calls with stacks on one thread, one
# process, no graph): exact counts pass, a wrong one fails and says why.
printf '# expect: exit=0 needs=cuda kernels=4 launch_stacks=9 launch_threads=1 gpu_processes=1 graph_kernels=0 samples=0\n' > "$tmp/known.py"
line=$("$real" tests/gpu/check_scenario.py "$tmp/known.py" 0 fixtures/gpu/fake_train.trc "$BIN/trc-dump") ||
  bad "check_scenario on the fixture: $line"
[ "$line" = "scenario known: PASS (kernels=4 launch_stacks=9 samples=0)" ] || bad "check_scenario: $line"
printf '# expect: exit=0 kernels>=5 graph_launch_stack=1\n' > "$tmp/wrong.py"
line=$("$real" tests/gpu/check_scenario.py "$tmp/wrong.py" 3 fixtures/gpu/fake_train.trc "$BIN/trc-dump") &&
  bad "check_scenario passed wrong expectations: $line"
[ "$line" = "scenario wrong: FAIL: exit 3, want 0; kernels 4, want >=5; graph_launch_stack 0, want =1 (kernels=4 launch_stacks=9 samples=0)" ] ||
  bad "check_scenario on wrong expectations: $line"

# trec without GPU support: a clear error, exit 1
mkdir -p "$tmp/alone/bin"
cp "$BIN/trec" "$tmp/alone/bin/"
rc=0
(cd "$tmp" && BIN="$tmp/tree/$BIN" TREC="$tmp/alone/bin/trec" PY="$tmp/stub/python3" \
  timeout 60 bash "$root/tests/gpu/run_real_check.sh" "$tmp/out2") > "$tmp/stdout2" 2>&1 || rc=$?
[ $rc = 1 ] || bad "trec without GPU support: exit $rc, want 1"
grep -q '^verdict: FAIL (run_real_check: error: .*GPU support: off' "$tmp/out2/verdict.txt" ||
  bad "no clear error for GPU support off: $(cat "$tmp/stdout2")"

# tests/gpu/overhead_split.sh against a workload stub that writes the
# JSON real_torch_check.py writes: every way runs (trec included, with
# parts of the injection off), one line each, ratios to bare
cat > "$tmp/stub/python3-split" <<STUB
#!/bin/sh
case "\$1" in
  */real_torch_check.py)
    out=; while [ \$# -gt 0 ]; do [ "\$1" = --out ] && out=\$2; shift; done
    exec "$real" -c "import json, sys; json.dump({'wall_s': 1.0, 'windows': [{'name': n, 'cpu_start_ns': 0, 'cpu_end_ns': 10**7} for n in ('train', 'syncs')]}, open(sys.argv[1], 'w'))" "\$out" ;;
esac
exec "$real" "\$@"
STUB
chmod +x "$tmp/stub/python3-split"
rc=0
(cd "$tmp" && BIN="$tmp/tree/$BIN" PY="$tmp/stub/python3-split" SPLIT_WAYS="bare cpu gpu off-driver,stacks" \
  timeout 120 bash "$root/tests/gpu/overhead_split.sh" 1 10) > "$tmp/split" 2>&1 || rc=$?
cat "$tmp/split"
[ $rc = 0 ] || bad "overhead_split.sh: exit $rc"
[ "$(grep -c '^split: ' "$tmp/split")" = 4 ] || bad "overhead_split.sh: want 4 lines"
grep -q '^split: off-driver,stacks all 1.0000 s (x1.000)  train 10.00 ms (x1.000)' "$tmp/split" ||
  bad "overhead_split.sh: the off- way's line"

[ $fail = 0 ] && echo "gpu_real_check: ok"
exit $fail
