#!/usr/bin/env bash
# bench/trec.sh — what recording costs, measured side by side in one run:
#  1. slowdown of a CPU-bound pure-Python benchmark (fixtures/workloads/
#     bench_cpu.py, timed inside the program) under trec at 100 Hz and
#     1 kHz and under cProfile, against the bare program: runs interleaved,
#     median of ROUNDS each;
#  2. trec's own CPU per sample for a steady 30-frame stack (distribution
#     from TREC_SELF_TIMING, plus all of trec's CPU divided by samples);
#  3. 10 kHz sustained: share of late ticks;
#  4. trace bytes per sample in steady state.
# BENCH_QUICK=1 shrinks everything; TREC_BENCH_PYTHON picks the interpreter.
set -u
cd "$(dirname "$0")/.."
BIN="${BIN:-bin}" BUILD="${BUILD:-build}"
TREC="$BIN/trec"
PY="${TREC_BENCH_PYTHON:-/usr/bin/python3}"
W=fixtures/workloads
[ -x "$TREC" ] || { echo "trec not built"; exit 1; }
[ -x "$PY" ] || PY=$(command -v python3)
T=$(mktemp -d /tmp/trec-bench.XXXXXX)
trap 'rm -rf "$T"' EXIT

if [ "${BENCH_QUICK:-0}" = 1 ]; then ROUNDS=3 WORK=25 STEADY=1.5; else ROUNDS=7 WORK=60 STEADY=4; fi

elapsed() { sed -n 's/^elapsed //p' "$1"; }

echo "interpreter: $PY ($("$PY" -c 'import platform; print(platform.python_version())')); $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "1. target slowdown: bench_cpu.py x$WORK, $ROUNDS interleaved rounds, time measured inside the program"
: >"$T/bare" ; : >"$T/t100" ; : >"$T/t1k" ; : >"$T/cprof"
for r in $(seq "$ROUNDS"); do
  "$PY" $W/bench_cpu.py $WORK >"$T/o" && elapsed "$T/o" >>"$T/bare"
  "$TREC" -q --rate 100 -o "$T/t100.trc" "$PY" $W/bench_cpu.py $WORK >"$T/o" && elapsed "$T/o" >>"$T/t100"
  "$TREC" --rate 1000 -o "$T/t1k.trc" "$PY" $W/bench_cpu.py $WORK >"$T/o" 2>"$T/t1k.err" &&
    elapsed "$T/o" >>"$T/t1k"
  "$PY" -m cProfile -o "$T/prof" $W/bench_cpu.py $WORK >"$T/o" && elapsed "$T/o" >>"$T/cprof"
done
"$PY" - "$T" <<'PYEOF'
import statistics, sys
d = sys.argv[1]
runs = {k: [float(x) for x in open("%s/%s" % (d, k)).read().split()] for k in ("bare", "t100", "t1k", "cprof")}
base = statistics.median(runs["bare"])
for k, label in (("bare", "bare"), ("t100", "trec 100 Hz"), ("t1k", "trec 1 kHz"), ("cprof", "cProfile")):
    m = statistics.median(runs[k])
    spread = "%.3f-%.3f" % (min(runs[k]), max(runs[k]))
    print("   %-12s median %.3f s (range %s, n=%d)  ratio %.3f  slowdown %+.1f %%"
          % (label, m, spread, len(runs[k]), m / base, 100 * (m / base - 1)))
PYEOF
sed -n 's/^trec: \([0-9]*\) samples.*, \([0-9.]* [KMi]*B\) written.*/   (last 1 kHz run: \1 samples, \2)/p' "$T/t1k.err" 2>/dev/null

echo "2. trec CPU per sample, steady 30-frame stack, 1 kHz, ${STEADY} s"
TREC_SELF_TIMING=1 "$TREC" -o "$T/deep.trc" "$PY" $W/bench_deep.py $STEADY 2>"$T/deep.err"
sed -n 's/^trec: self-timing: /   /p' "$T/deep.err"
if [ -x "$BUILD/bench/trec_ticks" ]; then
  echo "   baseline: an empty 1 kHz wake-up costs $("$BUILD/bench/trec_ticks" 2000) us of CPU here (included in 'all CPU')"
fi

echo "3. 10 kHz sustained, 30-frame stack, ${STEADY} s"
"$TREC" --rate 10000 -o "$T/fast.trc" "$PY" $W/bench_deep.py $STEADY 2>"$T/fast.err"
sed -n 's/^trec: /   /p' "$T/fast.err"

echo "4. bytes per sample (whole files: header, definitions and loss records included; marginal = between two lengths)"
"$TREC" -o "$T/deep2.trc" "$PY" $W/bench_deep.py "$(awk "BEGIN{print $STEADY*2}")" 2>"$T/deep2.err"
"$PY" - "$T" <<'PYEOF'
import os, re, sys
d = sys.argv[1]
def run(name):
    try:
        m = re.search(r"trec: (\d+) samples", open("%s/%s.err" % (d, name)).read())
        return int(m.group(1)), os.path.getsize("%s/%s.trc" % (d, name))
    except (OSError, AttributeError):
        return None
for label, name in (("steady 30-frame loop, 1 kHz", "deep"), ("same, twice as long", "deep2"),
                    ("steady 30-frame loop, 10 kHz", "fast"), ("bench_cpu.py, 1 kHz", "t1k")):
    r = run(name)
    if r:
        print("   %-30s %8d samples %9d bytes  %.3f bytes/sample" % (label, r[0], r[1], r[1] / max(r[0], 1)))
a, b = run("deep"), run("deep2")
if a and b and b[0] > a[0]:
    print("   steady state (marginal, 1 kHz): %.3f bytes/sample" % ((b[1] - a[1]) / (b[0] - a[0])))
PYEOF
