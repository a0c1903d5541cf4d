#!/usr/bin/env bash
# bench/lines.sh — trc-lines on a 1 M-sample trace (the trace of
# bench/collapsed_stats_pstats.sh: 4 threads, ~600 distinct stacks up to
# depth 48; BENCH_QUICK=1: 200 k), text and --json:
#   - samples/s (samples in the trace / wall time, best of 3) and peak RSS,
#     next to trc-stats on the same trace (the same reader, another sink);
#   - peak RSS on a trace with a quarter of the samples: memory follows
#     distinct stacks and lines, not samples.
# Under bench/run-all each figure also goes to $BENCH_RESULTS (group lines).
set -u
cd "${TRC_ROOT:-$(dirname "$0")/..}"
BUILD=${BUILD:-build} BIN=${BIN:-bin}
gen=$BUILD/tests/conv-gen
for f in "$BIN/trc-lines" "$BIN/trc-stats" "$gen"; do
  [ -x "$f" ] || { echo "lines: $f not built (make bench builds it)"; exit 1; }
done
n=1000000
[ "${BENCH_QUICK:-0}" = 1 ] && n=200000
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$gen" big "$n" "$tmp/big.trc" > /dev/null || exit 1
"$gen" big $((n / 4)) "$tmp/quarter.trc" > /dev/null || exit 1

python3 - "$n" "$tmp" "$BIN" <<'PY'
import os, subprocess, sys, time
n, tmp, bindir = int(sys.argv[1]), sys.argv[2], sys.argv[3]
sys.path.insert(0, "bench")
from benchres import result

TIME = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None

def run(argv):
    """wall seconds and peak RSS (KiB) of one run (GNU time when present:
    a child forked from python would count python's pages before exec)."""
    rss_file = f"{tmp}/rss"
    full = [TIME, "-f", "%M", "-o", rss_file] + argv if TIME else argv
    with open("/dev/null", "wb") as f:
        t0 = time.perf_counter()
        p = subprocess.Popen(full, stdout=f, stderr=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
        dt = time.perf_counter() - t0
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit(f"lines: {argv} exited {code}")
    rss = int(open(rss_file).read().split()[-1]) if TIME else ru.ru_maxrss
    return dt, rss

def best(argv):
    runs = [run(argv) for _ in range(3)]
    return min(r[0] for r in runs), max(r[1] for r in runs)

big, quarter = f"{tmp}/big.trc", f"{tmp}/quarter.trc"
print(f"trace: {n} samples, {os.path.getsize(big) / 1e6:.1f} MB")
ref_t, ref_rss = best([f"{bindir}/trc-stats", big])
print(f"{'trc-stats (same trace)':24s} {n / ref_t / 1e6:7.2f} M samples/s  peak RSS {ref_rss / 1024:6.1f} MiB")
result("lines", "trc-stats", n / ref_t, "samples/s", f"conv-gen big {n}, wall time, best of 3")
for name, args in [("trc-lines", []), ("trc-lines --json", ["--json"])]:
    argv = [f"{bindir}/trc-lines"] + args
    t, rss = best(argv + [big])
    _, rss_q = run(argv + [quarter])
    print(f"{name:24s} {n / t / 1e6:7.2f} M samples/s  peak RSS {rss / 1024:6.1f} MiB"
          f"  (x{t / ref_t:4.2f} trc-stats' time; RSS at 1/4 of the samples: {rss_q / 1024:.1f} MiB)")
    result("lines", name, n / t, "samples/s", f"conv-gen big {n}, wall time, best of 3")
    result("lines", name + ".rss", rss, "KiB")
    result("lines", name + ".rss_n_4", rss_q, "KiB", "peak RSS at a quarter of the samples")
PY
