#!/usr/bin/env bash
# The real check's judge (tests/gpu/check_real_trace.py --trace --bin)
# reads the converters' views right, on traces whose content is known by
# construction (no GPU needed):
#  - fixtures/gpu/fake_train.trc (fake CUPTI): blocking syncs at
#    train.py:35 and :36 (one call each) and none at :37, so reported
#    syncs at 35 and 36 pass and one at 37 fails (exit 1); its only GPU
#    time without a Python line is a 10 us kernel at 5.004510 s, so a
#    training window that ends before it passes the >= 99 % goal with
#    100.00 %, and one that takes it in fails with the share trc-stats
#    --gpu prints for the whole trace (the window covers every activity);
#  - the idle trace of tests/support/idle_traces.h: the idle headline and
#    the three idle stacks of its construction (docs/gpu.md, "Why is my
#    GPU idle?") as `info` lines, in order.
set -u
cd "${TRC_ROOT:-$(dirname "$0")/../..}"
BUILD=${BUILD:-build} BIN=${BIN:-bin}
gen=$BUILD/tests/idle-gen
ft=fixtures/gpu/fake_train.trc
for f in "$BIN/trc-dump" "$BIN/trc-stats" "$BIN/trc2collapsed" "$gen" "$ft"; do
  [ -e "$f" ] || { echo "FAIL: $f missing"; exit 1; }
done
py=$(command -v python3) || { echo "skip: no python3"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
judge() {   # judge EVENTS JSON TRACE: the judge's output in $tmp/out, its exit status
  "$py" tests/gpu/check_real_trace.py "$1" "$2" --trace "$3" --bin "$BIN" > "$tmp/out" 2>&1
}

# what real_torch_check.py writes, for the fixture: the training window
# from its first call (5.004000 s) to END_NS; syncs at LINES
json() {   # json END_NS LINE...
  local end=$1 s="" l
  shift
  for l in "$@"; do
    s="$s${s:+, }{\"what\": \"sync at $l\", \"line\": $l, \"calls\": 1}"
  done
  printf '{"script": "/elsewhere/train.py", "forward_line": 33, "wall_s": 1.0, "syncs": [%s], "windows": [{"name": "train", "ops": 1, "kernels_expected": null, "gpu_ms": 0.5, "cpu_start_ns": 5004000000, "cpu_launch_end_ns": 5004140000, "cpu_end_ns": %s, "pid": 4242}]}\n' "$s" "$end"
}
"$BIN/trc-dump" -e "$ft" > "$tmp/ft.events" || { echo "FAIL: trc-dump -e $ft"; exit 1; }

json 5004505000 35 36 > "$tmp/a.json"
judge "$tmp/ft.events" "$tmp/a.json" "$ft"
cat "$tmp/out"
for want in \
  'PASS  syncs: sync at 35 at train.py:35: 1 blocking calls in trc2collapsed --syncs, 0.462 ms blocked (want >= 1 calls)' \
  'PASS  syncs: sync at 36 at train.py:36: 1 blocking calls in trc2collapsed --syncs, 0.088 ms blocked (want >= 1 calls)' \
  'PASS  train: 100.00% of GPU time has a Python line (direct 100.00%, via a waiting thread 0.00%, none 0.00%) on the training step (0.003000 s to 0.003505 s of the trace; want >= 99 %)'; do
  grep -qxF -- "$want" "$tmp/out" || bad "fixture, syncs at 35 and 36: no line '$want'"
done
whole=$("$BIN/trc-stats" --gpu "$ft" 2>/dev/null | grep 'of GPU time has a Python line')
[ -n "$whole" ] || bad "trc-stats --gpu $ft prints no share line"
grep -qxF "info  share, whole run: $whole" "$tmp/out" || bad "no info line with the whole run's share '$whole'"
grep -qxF 'info  idle: GPU 0: compute busy 1.65%, copies only 1.39%, idle 96.96% of 20.026ms' "$tmp/out" ||
  bad "no idle headline of the fixture"
grep -q 'idle: top stack' "$tmp/out" && bad "an idle stack on a trace without samples"

json 5004710000 35 37 > "$tmp/b.json"
rc=0
judge "$tmp/ft.events" "$tmp/b.json" "$ft" || rc=$?
cat "$tmp/out"
[ $rc = 1 ] || bad "a sync missing at its line and a share under 99 % must fail: exit $rc"
for want in \
  'PASS  syncs: sync at 35 at train.py:35: 1 blocking calls in trc2collapsed --syncs, 0.462 ms blocked (want >= 1 calls)' \
  'FAIL  syncs: sync at 37 at train.py:37: 0 blocking calls in trc2collapsed --syncs, 0.000 ms blocked (want >= 1 calls)' \
  "FAIL  train: $whole on the training step (0.003000 s to 0.003710 s of the trace; want >= 99 %)"; do
  grep -qxF -- "$want" "$tmp/out" || bad "fixture, syncs at 35 and 37: no line '$want'"
done

"$gen" "$tmp/idle.trc" || { echo "FAIL: $gen"; exit 1; }
"$BIN/trc-dump" -e "$tmp/idle.trc" > "$tmp/idle.events" || { echo "FAIL: trc-dump -e idle.trc"; exit 1; }
printf '{"script": "u/train.py", "forward_line": 0, "wall_s": 1.0, "syncs": [], "windows": []}\n' > "$tmp/idle.json"
judge "$tmp/idle.events" "$tmp/idle.json" "$tmp/idle.trc"
cat "$tmp/out"
grep '^info  idle: ' "$tmp/out" > "$tmp/idle.info"
cat > "$tmp/idle.want" <<'EOF'
info  idle: GPU 0: compute busy 35.00%, copies only 10.00%, idle 55.00% of 20.000ms
info  idle: top stack 1: 72.73% idle in sleep (u/train.py:20)
info  idle: top stack 2: 18.18% idle in next (u/loader.py:5)
info  idle: top stack 3: 9.09% idle in step (u/train.py:10)
EOF
diff "$tmp/idle.want" "$tmp/idle.info" || bad "idle info lines of the idle trace"

[ $fails = 0 ] && echo "gpu_real_views: ok"
[ $fails = 0 ]
