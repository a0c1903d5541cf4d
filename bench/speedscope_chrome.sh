#!/usr/bin/env bash
# bench/speedscope_chrome.sh — trc2speedscope and trc2chrome on a 1 M-sample trace
# (4 threads, ~2000 distinct stacks; BENCH_QUICK=1: 200 k), side by side
# in one run:
#   - samples/s (samples in the trace / wall time) and peak RSS per tool;
#   - peak RSS at a quarter of the samples, to show memory does not grow
#     with the number of samples;
#   - trc2speedscope output size versus a naive per-sample speedscope JSON
#     (one "samples" entry per sample, what a converter that does not merge
#     consecutive identical samples writes), computed exactly by expanding
#     our runs with a tiny script.
# Under bench/run-all each figure also goes to $BENCH_RESULTS (group speedscope_chrome).
set -u
cd "${TRC_ROOT:-$(dirname "$0")/..}"
BUILD=${BUILD:-build} BIN=${BIN:-bin}
gen=$BUILD/tests/timeline-gen
for f in "$BIN/trc2speedscope" "$BIN/trc2chrome" "$gen"; do
  [ -x "$f" ] || { echo "speedscope_chrome: $f not built (make bench builds it)"; exit 1; }
done
n=1000000
[ "${BENCH_QUICK:-0}" = 1 ] && n=200000
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$gen" --write-big "$n" 4 "$tmp/big.trc" || exit 1
"$gen" --write-big $((n / 4)) 4 "$tmp/quarter.trc" || exit 1

python3 - "$n" "$tmp" "$BIN" <<'EOF'
import json, os, resource, subprocess, sys, time
n, tmp, bindir = int(sys.argv[1]), sys.argv[2], sys.argv[3]
sys.path.insert(0, "bench")
from benchres import result

def run(args):
    """Wall seconds, CPU seconds and peak RSS (KiB) of one run, measured by
    GNU time (a fork from this Python process would report Python's RSS)."""
    r = subprocess.run(["/usr/bin/time", "-f", "%e %U %S %M", "-o", f"{tmp}/time.txt"] + args,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if r.returncode not in (0, 1):
        sys.exit(f"speedscope_chrome: {' '.join(args)} failed with exit {r.returncode}")
    wall, user, sys_, rss = open(f"{tmp}/time.txt").read().split()[-4:]
    return float(wall), float(user) + float(sys_), int(rss)

size_trc = os.path.getsize(f"{tmp}/big.trc")
print(f"input: {n} samples, 4 threads, {size_trc / 1e6:.1f} MB .trc")
print("samples/s = samples in the trace / CPU time of the whole run (one core), best of 3")
print(f"{'tool':<16}{'samples/s':>14}{'cpu s':>8}{'peak RSS':>11}{'RSS @n/4':>10}{'RSS ratio':>11}{'output':>11}")
outs = {}
for tool in ("trc2speedscope", "trc2chrome"):
    exe = f"{bindir}/{tool}"
    best = None
    for _ in range(3):  # best of 3: the machine is shared
        r = run([exe, "--idle", "-o", f"{tmp}/{tool}.json", f"{tmp}/big.trc"])
        best = r if best is None or r[1] < best[1] else best
    wall, cpu, rss = best
    _, _, rss_q = run([exe, "--idle", "-o", f"{tmp}/{tool}.q.json", f"{tmp}/quarter.trc"])
    out = os.path.getsize(f"{tmp}/{tool}.json")
    outs[tool] = out
    print(f"{tool:<16}{n / max(cpu, 0.01):>14,.0f}{cpu:>8.2f}{rss / 1024:>9.1f}Mi{rss_q / 1024:>8.1f}Mi"
          f"{rss / max(rss_q, 1):>10.2f}x{out / 1e6:>9.1f}MB")
    result("speedscope_chrome", tool, n / max(cpu, 0.01), "samples/s", f"--idle, {n} samples, 4 threads, CPU time, best of 3")
    result("speedscope_chrome", tool + ".rss", rss, "KiB")
    result("speedscope_chrome", tool + ".rss_n_4", rss_q, "KiB", "peak RSS at a quarter of the samples")
    result("speedscope_chrome", tool + ".output", out / n, "B/sample", f"{out} bytes of output")

# Naive per-sample speedscope JSON of the same samples: every run of k
# samples (weight k * period) written as k entries of weight period.
doc = json.load(open(f"{tmp}/trc2speedscope.json"))
period = 1000000
naive = len(json.dumps({k: v for k, v in doc.items() if k != "profiles"}, separators=(",", ":")))
entries = runs = 0
for p in doc["profiles"]:
    naive += 120 + len(p["name"])  # profile header fields
    for s, w in zip(p["samples"], p["weights"]):
        k = w // period
        text = json.dumps(s, separators=(",", ":"))
        naive += k * (len(text) + 1) + k * (len(str(period)) + 1)
        entries += k
        runs += 1
ours = outs["trc2speedscope"]
print(f"speedscope entries: {runs:,} runs for {entries:,} samples ({entries / max(runs, 1):.2f} samples/entry)")
print(f"speedscope output: {ours / 1e6:.1f} MB vs naive per-sample JSON {naive / 1e6:.1f} MB: "
      f"ratio naive/ours = {naive / ours:.2f}x")
print(f"input .trc vs speedscope JSON: {ours / size_trc:.1f}x smaller as .trc")
result("speedscope_chrome", "speedscope_naive_vs_ours", naive / ours, "x",
       f"naive per-sample JSON {naive} B / ours {ours} B ({entries / max(runs, 1):.2f} samples per entry)")
EOF
