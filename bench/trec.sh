#!/usr/bin/env bash
# bench/trec.sh — what recording costs, measured side by side in one run:
#  1. slowdown of a CPU-bound pure-Python benchmark (fixtures/workloads/
#     bench_cpu.py, timed inside the program) under trec at 100 Hz and
#     1 kHz, under trec --blocking at 1 kHz and under cProfile, against
#     the bare program: runs interleaved, median of ROUNDS each;
#  2. trec's own CPU per sample for a steady 30-frame stack (distribution
#     from TREC_SELF_TIMING, plus all of trec's CPU divided by samples);
#     2c: the same with and without --blocking, runs alternated;
#  3. 10 kHz sustained: share of late ticks;
#  4. trace bytes per sample in steady state.
# BENCH_QUICK=1 shrinks everything; TREC_BENCH_PYTHON picks the interpreter.
# Under bench/run-all each figure also goes to $BENCH_RESULTS (group trec).
set -u
cd "$(dirname "$0")/.."
. bench/lib.bash
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

PYV=$("$PY" -c 'import platform; print(platform.python_version())')
echo "interpreter: $PY ($PYV); $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "1. target slowdown: bench_cpu.py x$WORK, $ROUNDS interleaved rounds, time measured inside the program"
: >"$T/bare" ; : >"$T/t100" ; : >"$T/t1k" ; : >"$T/tblk" ; : >"$T/cprof"
for r in $(seq "$ROUNDS"); do
  "$PY" $W/bench_cpu.py $WORK >"$T/o" && elapsed "$T/o" >>"$T/bare"
  "$TREC" -q --rate 100 -o "$T/t100.trc" "$PY" $W/bench_cpu.py $WORK >"$T/o" && elapsed "$T/o" >>"$T/t100"
  "$TREC" --rate 1000 -o "$T/t1k.trc" "$PY" $W/bench_cpu.py $WORK >"$T/o" 2>"$T/t1k.err" &&
    elapsed "$T/o" >>"$T/t1k"
  "$TREC" -q --blocking --rate 1000 -o "$T/tblk.trc" "$PY" $W/bench_cpu.py $WORK >"$T/o" &&
    elapsed "$T/o" >>"$T/tblk"
  "$PY" -m cProfile -o "$T/prof" $W/bench_cpu.py $WORK >"$T/o" && elapsed "$T/o" >>"$T/cprof"
done
"$PY" - "$T" "$PY $PYV" "$WORK" <<'PYEOF'
import statistics, sys
sys.path.insert(0, "bench")
from benchres import result
d = sys.argv[1]
runs = {k: [float(x) for x in open("%s/%s" % (d, k)).read().split()]
        for k in ("bare", "t100", "t1k", "tblk", "cprof")}
base = statistics.median(runs["bare"]) if runs["bare"] else None
for k, label in (("bare", "bare"), ("t100", "trec 100 Hz"), ("t1k", "trec 1 kHz"),
                 ("tblk", "--blocking 1k"), ("cprof", "cProfile")):
    if not runs[k] or not base:
        print("   %-12s no run completed" % label)
        continue
    m = statistics.median(runs[k])
    spread = "%.3f-%.3f" % (min(runs[k]), max(runs[k]))
    print("   %-12s median %.3f s (range %s, n=%d)  ratio %.3f  slowdown %+.1f %%"
          % (label, m, spread, len(runs[k]), m / base, 100 * (m / base - 1)))
    result("trec", k + "_s", m, "s", "bench_cpu.py x%s, %s, median of %d, range %s"
           % (sys.argv[3], sys.argv[2], len(runs[k]), spread))
if runs["tblk"] and runs["t1k"]:
    r = statistics.median(runs["tblk"]) / statistics.median(runs["t1k"])
    print("   --blocking / plain trec at 1 kHz, program time: ratio %.3f" % r)
PYEOF
sed -n 's/^trec: \([0-9]*\) samples.*, \([0-9.]* [KMi]*B\) written.*/   (last 1 kHz run: \1 samples, \2)/p' "$T/t1k.err" 2>/dev/null

echo "2. trec CPU per sample, steady 30-frame stack, 1 kHz, ${STEADY} s"
TREC_SELF_TIMING=1 "$TREC" -o "$T/deep.trc" "$PY" $W/bench_deep.py $STEADY 2>"$T/deep.err"
sed -n 's/^trec: self-timing: /   /p' "$T/deep.err"
# "N ticks, per sample p50 A us, p90 B us, p99 C us, max D us; all CPU E ms = F us per sample"
st=$(sed -n 's/^trec: self-timing: //p' "$T/deep.err")
for q in p50 p90 p99 max; do
  bench_result trec "sample_$q" "$(sed -n "s/.* $q \([0-9.]*\) us.*/\1/p" <<< "$st")" us "${STEADY} s at 1 kHz, 30 frames"
done
bench_result trec sample_all_cpu "$(sed -n 's/.*= \([0-9.]*\) us per sample.*/\1/p' <<< "$st")" us \
  "all of trec's CPU / samples, wake-ups included"
if [ -x "$BUILD/bench/trec_ticks" ]; then
  wake=$("$BUILD/bench/trec_ticks" 2000 | cut -d' ' -f1)
  echo "   baseline: an empty 1 kHz wake-up costs $wake us of CPU here (included in 'all CPU')"
  bench_result trec wakeup "$wake" us "an empty 1 kHz wake-up (bench/trec_ticks)"
fi

echo "2c. --blocking against plain trec, CPU per sample, steady 30-frame stack, 1 kHz, ${STEADY} s, runs alternated"
for r in 1 2; do
  for mode in plain blocking; do
    flag=; [ $mode = blocking ] && flag=--blocking
    TREC_SELF_TIMING=1 "$TREC" $flag -o "$T/$mode.trc" "$PY" $W/bench_deep.py $STEADY 2>"$T/$mode.$r.err"
  done
done
"$PY" - "$T" "$STEADY" <<'PYEOF'
import re, statistics, sys
sys.path.insert(0, "bench")
from benchres import result
d, steady = sys.argv[1], sys.argv[2]
fig = {}
for mode in ("plain", "blocking"):
    p50, allc = [], []
    for r in (1, 2):
        try:
            t = open("%s/%s.%d.err" % (d, mode, r)).read()
        except OSError:
            continue
        m = re.search(r"p50 ([0-9.]+) us", t)
        a = re.search(r"= ([0-9.]+) us per sample", t)
        if m and a:
            p50.append(float(m.group(1)))
            allc.append(float(a.group(1)))
    if p50:
        fig[mode] = (statistics.median(p50), statistics.median(allc))
        print("   %-9s per sample p50 %.2f us, all CPU / samples %.2f us (median of %d runs)"
              % (mode, fig[mode][0], fig[mode][1], len(p50)))
if "plain" in fig and "blocking" in fig:
    b, p = fig["blocking"], fig["plain"]
    print("   --blocking / plain: p50 ratio %.2f, all CPU ratio %.2f" % (b[0] / p[0], b[1] / p[1]))
    result("trec", "blk_sample_p50", b[0], "us", "--blocking, %s s at 1 kHz, 30 frames" % steady)
    result("trec", "blk_plain_p50", p[0], "us", "plain trec in the same alternation")
    result("trec", "blk_sample_all_cpu", b[1], "us", "--blocking: all trec CPU / samples")
    result("trec", "blk_plain_all_cpu", p[1], "us", "plain trec in the same alternation")
PYEOF

echo "2b. trec CPU with 32 blocked threads and 1 running, 1 kHz, ${STEADY} s: switch records against /proc (the previous method)"
for mode in switch proc; do
  if [ $mode = proc ]; then
    TREC_THREAD_STATE=proc TREC_SELF_TIMING=1 "$TREC" -o "$T/pool.trc" "$PY" $W/bench_pool.py $STEADY 32 2>"$T/pool.err"
  else
    TREC_SELF_TIMING=1 "$TREC" -o "$T/pool.trc" "$PY" $W/bench_pool.py $STEADY 32 2>"$T/pool.err"
  fi
  ps=$(sed -n 's/^trec: self-timing: //p' "$T/pool.err")
  echo "   $mode: $ps"
  # per tick: all of trec's CPU (wake-ups included) over ticks; per sample: the tick's own work
  bench_result trec "pool_${mode}_tick" "$(sed -n 's/^\([0-9]*\) ticks.*all CPU \([0-9.]*\) ms.*/\2 \1/p' <<< "$ps" |
    awk '$2 > 0 {printf "%.2f", $1 * 1000 / $2}')" us "all trec CPU / ticks, 33 threads, $mode"
  bench_result trec "pool_${mode}_p50" "$(sed -n 's/.* p50 \([0-9.]*\) us.*/\1/p' <<< "$ps")" us \
    "per sample p50, 33 threads, $mode"
done

echo "3. 10 kHz sustained, 30-frame stack, ${STEADY} s"
"$TREC" --rate 10000 -o "$T/fast.trc" "$PY" $W/bench_deep.py $STEADY 2>"$T/fast.err"
sed -n 's/^trec: /   /p' "$T/fast.err"
# trec's closing line names late ticks only over 5 % of the ticks: the
# trace's LOSS records have them always.  Prints "LATE% MISSED SAMPLES";
# one thread, so late samples over samples is the share of ticks.
late_of() {
  "$BIN/trc-dump" --summary "$1" | awk '$1 == "samples:" { s = $2 } $1 == "samples_late" { l = $2 }
    $1 == "samples_missed" { m = $2 } END { printf "%.2f %d %d\n", s ? 100 * l / s : 0, m, s }'
}
read -r fpct fmissed fs < <(late_of "$T/fast.trc")
bench_result trec late_10k "$fpct" pct "$fs samples in ${STEADY} s, $fmissed missed"
if [ -x "$BUILD/bench/trec_ticks" ]; then
  # the floor: wake-ups with nothing in them, same pacing, same rule
  e10=$("$BUILD/bench/trec_ticks" $(awk "BEGIN{print int($STEADY*10000)}") 100 | cut -d' ' -f2)
  echo "   baseline: empty wake-ups at 10 kHz are late in $e10 % here"
  bench_result trec late_10k_empty "$e10" pct "empty wake-ups at 10 kHz, same rule (bench/trec_ticks)"
fi

echo "3b. 10 kHz sustained with --spin (the clock watched, one CPU busy), 30-frame stack, ${STEADY} s"
"$TREC" --spin --rate 10000 -o "$T/spin.trc" "$PY" $W/bench_deep.py $STEADY 2>"$T/spin.err"
sed -n 's/^trec: /   /p' "$T/spin.err"
read -r spct _ ss < <(late_of "$T/spin.trc")
bench_result trec late_10k_spin "$spct" pct "$ss samples in ${STEADY} s with --spin"

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
sys.path.insert(0, "bench")
from benchres import result
for label, name in (("steady 30-frame loop, 1 kHz", "deep"), ("same, twice as long", "deep2"),
                    ("steady 30-frame loop, 10 kHz", "fast"), ("bench_cpu.py, 1 kHz", "t1k")):
    r = run(name)
    if r:
        print("   %-30s %8d samples %9d bytes  %.3f bytes/sample" % (label, r[0], r[1], r[1] / max(r[0], 1)))
        result("trec", "bytes_" + name, r[1] / max(r[0], 1), "B/sample",
               "%s: %d samples, %d bytes, whole file" % (label, r[0], r[1]))
a, b = run("deep"), run("deep2")
if a and b and b[0] > a[0]:
    print("   steady state (marginal, 1 kHz): %.3f bytes/sample" % ((b[1] - a[1]) / (b[0] - a[0])))
    result("trec", "bytes_steady", (b[1] - a[1]) / (b[0] - a[0]), "B/sample",
           "marginal between %d and %d samples of a 30-frame loop" % (a[0], b[0]))
PYEOF
