#!/usr/bin/env bash
# bench/gpu_idle.sh — the GPU idle stage (lib/export/common/gpu_idle.c)
# through trc2collapsed --gpu-idle on a trace of 1 M GPU activities, each
# after its launch call, over two devices, with one thread sampled every
# 1 ms (idle-gen --big; BENCH_QUICK=1: 200 k):
#   - activities per CPU second (best of 3; goal: 1 M/s on one core),
#     next to the reader alone (trc-dump --summary) as the floor;
#   - peak RSS, and at half the activities (both traces span far more than
#     the 4 s horizon: 20 s and 10 s): memory follows the horizon and the
#     distinct stacks, not the activities.
# Under bench/run-all each figure also goes to $BENCH_RESULTS (group
# gpu_idle).
set -u
cd "${TRC_ROOT:-$(dirname "$0")/..}"
BUILD=${BUILD:-build} BIN=${BIN:-bin}
gen=$BUILD/tests/idle-gen
for f in "$BIN/trc2collapsed" "$BIN/trc-dump" "$gen"; do
  [ -x "$f" ] || { echo "gpu_idle: $f not built (make bench builds it)"; exit 1; }
done
n=1000000
[ "${BENCH_QUICK:-0}" = 1 ] && n=200000
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$gen" --big "$n" "$tmp/big.trc" || exit 1
"$gen" --big $((n / 2)) "$tmp/half.trc" || exit 1

python3 - "$n" "$tmp" "$BIN" <<'PY'
import os, subprocess, sys
n, tmp, bindir = int(sys.argv[1]), sys.argv[2], sys.argv[3]
sys.path.insert(0, "bench")
from benchres import result

def run(argv):
    """CPU seconds (user + system) and peak RSS (KiB) of one run."""
    with open(os.devnull, "wb") as null:
        p = subprocess.Popen(argv, stdout=null, stderr=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
    if status != 0:
        sys.exit(f"gpu_idle: {argv} failed ({status})")
    return ru.ru_utime + ru.ru_stime, ru.ru_maxrss

def best(argv):
    runs = [run(argv) for _ in range(3)]
    return min(r[0] for r in runs), max(r[1] for r in runs)

big, half = f"{tmp}/big.trc", f"{tmp}/half.trc"
floor, _ = best([f"{bindir}/trc-dump", "--summary", big])
cpu, rss = best([f"{bindir}/trc2collapsed", "--gpu-idle", big])
_, rss2 = best([f"{bindir}/trc2collapsed", "--gpu-idle", half])
rate = n / cpu
print(f"trace: {n} activities and {n} launch calls, {os.path.getsize(big) / 1e6:.1f} MB")
print(f"reader alone (trc-dump --summary): {n / floor / 1e6:.2f} M activities/CPU s")
print(f"trc2collapsed --gpu-idle: {rate / 1e6:.2f} M activities/CPU s "
      f"({cpu:.3f} s), peak RSS {rss / 1024:.1f} MiB; at n/2 {rss2 / 1024:.1f} MiB"
      f"{'' if rate >= 1e6 else '  (below the 1 M/s goal)'}")
result("gpu_idle", "activities_per_s", rate, "/s", f"{n} activities")
result("gpu_idle", "rss", rss, "KiB")
result("gpu_idle", "rss_n_2", rss2, "KiB")
PY
