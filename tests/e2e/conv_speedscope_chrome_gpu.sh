#!/usr/bin/env bash
# GPU data in trc2chrome and trc2speedscope, as users run them:
#   - the GPU fixture made by the real injection code with a fake CUPTI
#     (fixtures/gpu/fake_train.trc): exit 1 with one warning (the
#     fixture records dropped CUPTI records); its golden outputs are cases
#     of tests/e2e/conv_goldens.sh (fixtures/convert/*_fake_train),
#     which pins these very outputs;
#   - both fixture and a synthetic training-step trace
#     (timeline-gen --write-gpu: CPU samples, nested runtime/driver
#     calls, overlapping work on one stream, NVTX, NVML counters, two
#     processes sharing a stream number) checked by tests/e2e/lib/gpu_views_check.py
#     against trc2nvvp --print-gpu-trace --csv of the same input: flows,
#     nesting (also under speedscope's importer), kernel time per stream
#     exact to the ns, every activity drawn once, names, counters, and the
#     evented speedscope rules;
#   - --from/--to windows still give valid documents.
set -u
cd "${TRC_ROOT:-$(dirname "$0")/../..}"
BUILD=${BUILD:-build} BIN=${BIN:-bin}
gen=$BUILD/tests/timeline-gen
for f in "$BIN/trc2speedscope" "$BIN/trc2chrome" "$BIN/trc2nvvp" "$gen"; do
  [ -x "$f" ] || { echo "FAIL: $f not built"; exit 1; }
done
bindir=$(cd "$BIN" && pwd)
ss=$bindir/trc2speedscope ch=$bindir/trc2chrome nv=$bindir/trc2nvvp
check=$PWD/tests/e2e/lib/gpu_views_check.py
fixture=$PWD/fixtures/gpu/fake_train.trc
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

# --- the fixture ----------------------------------------------------------------
cp "$fixture" "$tmp/fake_train.trc"
fixture_run() { # fixture_run NAME TOOL
  local name=$1 tool=$2
  (cd "$tmp" && "$tool" -o "$name" fake_train.trc) 2>"$tmp/err"; local rc=$?
  [ $rc -eq 1 ] || bad "$name: exit $rc, expected 1 (the fixture records dropped GPU records)"
  [ "$(wc -l < "$tmp/err")" -eq 1 ] && grep -q "4 GPU records dropped" "$tmp/err" ||
    { bad "$name: expected one warning about 4 dropped GPU records, got:"; cat "$tmp/err"; }
}
fixture_run fake_train.trace.json "$ch"
fixture_run fake_train.speedscope.json "$ss"

# --- the fixture: structure, against trc2nvvp's GPU trace ------------------------
"$nv" --print-gpu-trace --csv -o "$tmp/fixture.csv" "$fixture" 2>/dev/null
[ -s "$tmp/fixture.csv" ] || bad "trc2nvvp --print-gpu-trace --csv gave nothing"
# 9 launches whose activity was recorded (correlation 17's kernel was dropped)
python3 "$check" chrome "$tmp/fake_train.trace.json" "$tmp/fixture.csv" --flows 9 ||
  bad "fixture: Chrome trace structure"
python3 "$check" speedscope "$tmp/fake_train.speedscope.json" "$tmp/fixture.csv" ||
  bad "fixture: speedscope structure"
grep -q '"name":"GPU 0: NVIDIA H100 80GB HBM3 (fake)"' "$tmp/fake_train.trace.json" ||
  bad "fixture: no GPU 0 process named after its device"
grep -q '"name":"GPU 0 stream 13"' "$tmp/fake_train.speedscope.json" ||
  bad "fixture: no speedscope profile for stream 13"

# --- a synthetic training trace ---------------------------------------------------
"$gen" --write-gpu 20000 "$tmp/train.trc" > "$tmp/train.info" || { echo "FAIL: generator"; exit 1; }
flows=$(sed -n 's/.*flows=\([0-9]*\).*/\1/p' "$tmp/train.info")
kernel_ns=$(sed -n 's/.*kernel_ns=\([0-9]*\).*/\1/p' "$tmp/train.info")
"$nv" --print-gpu-trace --csv -o "$tmp/train.csv" "$tmp/train.trc" 2>/dev/null
"$ch" -o "$tmp/train.trace.json" "$tmp/train.trc" 2>/dev/null; rc=$?
[ $rc -eq 1 ] || bad "synthetic trace: trc2chrome exit $rc, expected 1 (GPU records dropped)"
python3 "$check" chrome "$tmp/train.trace.json" "$tmp/train.csv" --flows "$flows" --counters ||
  bad "synthetic: Chrome trace structure"
"$ss" -o "$tmp/train.speedscope.json" "$tmp/train.trc" 2>/dev/null
python3 "$check" speedscope "$tmp/train.speedscope.json" "$tmp/train.csv" ||
  bad "synthetic: speedscope structure"
# The generator's own count of kernel time = the CSV's = the slices' (checked above).
python3 - "$tmp/train.csv" "$kernel_ns" <<'EOF' || bad "synthetic: trc2nvvp kernel time differs from what was written"
import csv, sys
from decimal import Decimal
rows = list(csv.reader(open(sys.argv[1])))
unit = {"ns": 1, "us": 1000, "ms": 10**6, "s": 10**9}[rows[1][1]]
total = sum(Decimal(r[1]) * unit for r in rows[2:] if r and r[2] != "")
sys.exit(0 if total == int(sys.argv[2]) else f"CSV kernel time {total} != written {sys.argv[2]}")
EOF
python3 - "$tmp/train.trace.json" "$tmp/train.speedscope.json" <<'EOF' || bad "synthetic: expected tracks/profiles missing"
import json, sys
ch = json.load(open(sys.argv[1]))
names = {e["args"]["name"] for e in ch["traceEvents"] if e["ph"] == "M" and e["name"] == "thread_name"}
want = {"CUDA API: MainThread (tid 4242)", "CUDA API: autograd (tid 4260)", "markers: MainThread (tid 4242)",
        "markers (process)", "stream 13", "stream 13 (2)", "stream 13 sync", "context 1 sync",
        "stream 7 (pid 4242, context 1)", "stream 7 (pid 4343, context 9)", "stream 3", "MainThread"}
missing = want - names
procs = {e["args"]["name"] for e in ch["traceEvents"] if e["ph"] == "M" and e["name"] == "process_name"}
for p in ("GPU 0: NVIDIA H100 80GB HBM3 (synthetic)", "GPU 1: NVIDIA H100 80GB HBM3 (synthetic)"):
    if p not in procs: missing.add(p)
inst = [e for e in ch["traceEvents"] if e["ph"] == "i" and e.get("cat") == "nvtx"]
if not any(e["name"] == "checkpoint" for e in inst): missing.add("checkpoint instant")
if not any(e["name"] == "never popped" for e in inst): missing.add("unmatched PUSH instant")
if not any(e["name"] == "never pushed" for e in inst): missing.add("unmatched POP instant")
if not any(e["ph"] == "i" and e["name"] == "loss: GPU records dropped" for e in ch["traceEvents"]):
    missing.add("GPU_DROPPED loss instant")
ss = json.load(open(sys.argv[2]))
pn = [p["name"] for p in ss["profiles"]]
for p in ("app.py (pid 4242): MainThread", "GPU 0 stream 13", "GPU 0 stream 14", "GPU 1 stream 3",
          "GPU 0 stream 7 (pid 4242, context 1)", "GPU 0 stream 7 (pid 4343, context 9)"):
    if p not in pn: missing.add("speedscope profile " + p)
if pn[0] != "app.py (pid 4242): MainThread": missing.add("CPU profiles first")
if missing: sys.exit(f"missing: {sorted(missing)}")
print(f"tracks and profiles present ({len(names)} thread names, {len(pn)} profiles)")
EOF

# --- windows: a slice of time is still a valid document ----------------------------
"$ch" --from 0.005 --to 0.050 -o "$tmp/win.trace.json" "$tmp/train.trc" 2>/dev/null
"$ss" --from 0.005 --to 0.050 -o "$tmp/win.speedscope.json" "$tmp/train.trc" 2>/dev/null
"$nv" --print-gpu-trace --csv --from 0.005 --to 0.050 -o "$tmp/win.csv" "$tmp/train.trc" 2>/dev/null
python3 "$check" chrome "$tmp/win.trace.json" "$tmp/win.csv" >/dev/null || bad "--from/--to: Chrome trace"
python3 "$check" speedscope "$tmp/win.speedscope.json" "$tmp/win.csv" >/dev/null || bad "--from/--to: speedscope"

[ $fails -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "all GPU view checks passed"
