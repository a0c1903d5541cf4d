#!/usr/bin/env bash
# bench/flamegraph.sh — trc2flamegraph on a 1 M-sample trace (conv-gen
# big: 4 threads, ~600 distinct stacks up to depth 48; BENCH_QUICK=1:
# 200 k): CPU time of the whole run on one core (goal: under 1 s at 1 M),
# next to trc2collapsed on the same trace (the folding both share), peak
# RSS, RSS at a quarter of the samples (memory follows distinct stacks,
# not samples), and the SVG's size.  Under bench/run-all each figure also
# goes to $BENCH_RESULTS (group flamegraph).
set -u
cd "${TRC_ROOT:-$(dirname "$0")/..}"
BUILD=${BUILD:-build} BIN=${BIN:-bin}
gen=$BUILD/tests/conv-gen
for f in "$BIN/trc2flamegraph" "$BIN/trc2collapsed" "$gen" /usr/bin/time; do
  [ -x "$f" ] || { echo "flamegraph: $f not built or missing (make bench builds the tools; GNU time)"; exit 1; }
done
n=1000000
[ "${BENCH_QUICK:-0}" = 1 ] && n=200000
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$gen" big "$n" "$tmp/big.trc" > /dev/null || exit 1
"$gen" big $((n / 4)) "$tmp/quarter.trc" > /dev/null || exit 1

python3 - "$n" "$tmp" "$BIN" <<'PY'
import os, shutil, subprocess, sys
n, tmp, bindir = int(sys.argv[1]), sys.argv[2], sys.argv[3]
sys.path.insert(0, "bench")
from benchres import result
# one core, as the goal says, where taskset exists
pin = ["taskset", "-c", "0"] if shutil.which("taskset") else []

def run(args):
    """CPU seconds (user + system) and peak RSS (KiB), by GNU time."""
    r = subprocess.run(["/usr/bin/time", "-f", "%U %S %M", "-o", f"{tmp}/time.txt"] + pin + args,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if r.returncode != 0:
        sys.exit(f"flamegraph: {' '.join(args)} failed with exit {r.returncode}")
    user, sys_, rss = open(f"{tmp}/time.txt").read().split()[-3:]
    return float(user) + float(sys_), int(rss)

big, quarter = f"{tmp}/big.trc", f"{tmp}/quarter.trc"
print(f"input: {n:,} samples, {os.path.getsize(big) / 1e6:.1f} MB .trc; CPU time of the whole run, best of 3"
      f"{', pinned to CPU 0' if pin else ''}")
rows = [("trc2collapsed", ["-o", f"{tmp}/big.folded"]),
        ("trc2flamegraph", ["-o", f"{tmp}/big.svg"]),
        ("trc2flamegraph --threads --idle", ["--threads", "--idle", "-o", f"{tmp}/threads.svg"])]
for name, args in rows:
    exe = f"{bindir}/{name.split()[0]}"
    cpu, rss = min(run([exe] + args + [big]) for _ in range(3))
    _, rss_q = run([exe] + args + [quarter])
    out = os.path.getsize(args[-1])
    verdict = "" if name.startswith("trc2collapsed") else (
        "ok" if cpu < 1.0 or n < 1000000 else "over 1 s")
    print(f"{name:<34}{n / max(cpu, 0.001) / 1e6:7.2f} M samples/s {cpu:6.3f} s  peak RSS {rss / 1024:6.1f} MiB"
          f"  (at n/4: {rss_q / 1024:.1f} MiB)  output {out / 1024:.0f} KiB  {verdict}")
    result("flamegraph", name + ".cpu", cpu, "s", f"conv-gen big {n}, CPU time, best of 3; goal 1 s at 1 M")
    result("flamegraph", name + ".rss", rss, "KiB")
    result("flamegraph", name + ".rss_n_4", rss_q, "KiB", "peak RSS at a quarter of the samples")
    result("flamegraph", name + ".bytes", out, "B")
PY
