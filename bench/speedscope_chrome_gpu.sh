#!/usr/bin/env bash
# bench/speedscope_chrome_gpu.sh — GPU data in trc2chrome and trc2speedscope
# (1 M GPU activities convert in under 2 s per output on one core).  The input
# is the synthetic training trace of tests/support/timeline_traces.c
# (timeline-gen --write-gpu N): N launches, i.e. about N kernels,
# copies and memsets plus 1.9 N CUDA API calls (runtime calls around
# driver calls), NVTX ranges, CPU samples and NVML counters.  BENCH_QUICK=1:
# N = 200 k.  Printed side by side in one run: activities/s and CPU seconds
# (user + system: writing the output is part of the cost), peak RSS,
# peak RSS at N/4, and their ratio (1.00: memory does not grow with the
# activities; docs/BENCHMARKS.md says what still does).
# Under bench/run-all each figure also goes to $BENCH_RESULTS
# (group speedscope_chrome_gpu).
set -u
cd "${TRC_ROOT:-$(dirname "$0")/..}"
BUILD=${BUILD:-build} BIN=${BIN:-bin}
gen=$BUILD/tests/timeline-gen
for f in "$BIN/trc2speedscope" "$BIN/trc2chrome" "$gen"; do
  [ -x "$f" ] || { echo "speedscope_chrome_gpu: $f not built (make bench builds it)"; exit 1; }
done
n=1000000
[ "${BENCH_QUICK:-0}" = 1 ] && n=200000
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$gen" --write-gpu "$n" "$tmp/gpu.trc" > "$tmp/gpu.info" || exit 1
"$gen" --write-gpu $((n / 4)) "$tmp/quarter.trc" > /dev/null || exit 1

python3 - "$tmp" "$BIN" <<'EOF'
import os, subprocess, sys
tmp, bindir = sys.argv[1], sys.argv[2]
sys.path.insert(0, "bench")
from benchres import result
info = dict(kv.split("=") for kv in open(f"{tmp}/gpu.info").read().split())
acts, calls = int(info["activities"]), int(info["api_calls"])

def run(args):
    """CPU seconds (user + system) and peak RSS (KiB), by GNU time."""
    r = subprocess.run(["/usr/bin/time", "-f", "%U %S %M", "-o", f"{tmp}/time.txt"] + args,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if r.returncode not in (0, 1):
        sys.exit(f"speedscope_chrome_gpu: {' '.join(args)} failed with exit {r.returncode}")
    user, sys_, rss = open(f"{tmp}/time.txt").read().split()[-3:]
    return float(user) + float(sys_), int(rss)

print(f"input: {acts:,} GPU activities, {calls:,} API calls, "
      f"{os.path.getsize(f'{tmp}/gpu.trc') / 1e6:.1f} MB .trc")
print("activities/s = GPU activities in the trace / CPU time of the whole run (one core), best of 3")
print(f"{'tool':<16}{'activities/s':>14}{'cpu s':>8}{'peak RSS':>11}{'RSS @n/4':>10}{'n : n/4':>9}{'output':>11}")
for tool in ("trc2speedscope", "trc2chrome"):
    exe = f"{bindir}/{tool}"
    cpu, rss = min(run([exe, "-o", f"{tmp}/{tool}.json", f"{tmp}/gpu.trc"]) for _ in range(3))
    _, rss_q = run([exe, "-o", f"{tmp}/{tool}.q.json", f"{tmp}/quarter.trc"])
    out = os.path.getsize(f"{tmp}/{tool}.json")
    verdict = "ok" if cpu < 2.0 or acts < 1000000 else "over 2 s"
    print(f"{tool:<16}{acts / max(cpu, 0.01):>14,.0f}{cpu:>8.2f}{rss / 1024:>9.1f}Mi"
          f"{rss_q / 1024:>8.1f}Mi{rss / max(rss_q, 1):>8.2f}x{out / 1e6:>9.1f}MB  {verdict}")
    result("speedscope_chrome_gpu", tool, acts / max(cpu, 0.01), "activities/s", f"{acts} activities, CPU time, best of 3, {verdict}")
    result("speedscope_chrome_gpu", tool + ".cpu", cpu, "s", "budget 2 s at 1 M activities")
    result("speedscope_chrome_gpu", tool + ".rss", rss, "KiB")
    result("speedscope_chrome_gpu", tool + ".rss_n_4", rss_q, "KiB", "peak RSS at a quarter of the activities")
    result("speedscope_chrome_gpu", tool + ".rss_growth", rss / max(rss_q, 1), "x", "peak RSS at n over peak RSS at n/4")
EOF
