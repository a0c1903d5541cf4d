#!/usr/bin/env bash
# bench/collapsed_stats_pstats.sh — trc2collapsed, trc-stats and trc2pstats
# on a 1 M-sample trace (4 threads, ~600 distinct stacks up to depth 48;
# BENCH_QUICK=1: 200 k), side by side in one run:
#   - samples/s (samples in the trace / wall time, best of 3) and peak RSS
#     per tool, next to the reader alone (trc-dump --summary) as the floor;
#   - peak RSS on a trace with a quarter of the samples: memory follows
#     distinct stacks, not samples;
#   - trc2pstats + pstats load versus `python -m cProfile -o` of a program
#     with the same shape (120 functions calling each other at random, to
#     depth 48): file size, pstats load time, and what cProfile costs the
#     program while it runs.
# Under bench/run-all each figure also goes to $BENCH_RESULTS
# (group collapsed_stats_pstats).
set -u
cd "${TRC_ROOT:-$(dirname "$0")/..}"
BUILD=${BUILD:-build} BIN=${BIN:-bin}
gen=$BUILD/tests/conv-gen
for f in "$BIN/trc2collapsed" "$BIN/trc-stats" "$BIN/trc2pstats" "$gen"; do
  [ -x "$f" ] || { echo "collapsed_stats_pstats: $f not built (make bench builds it)"; exit 1; }
done
n=1000000
[ "${BENCH_QUICK:-0}" = 1 ] && n=200000
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$gen" big "$n" "$tmp/big.trc" > /dev/null || exit 1
"$gen" big $((n / 4)) "$tmp/quarter.trc" > /dev/null || exit 1

python3 - "$n" "$tmp" "$BIN" <<'EOF'
import os, subprocess, sys, time
n, tmp, bindir = int(sys.argv[1]), sys.argv[2], sys.argv[3]
sys.path.insert(0, "bench")
from benchres import result

TIME = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None

def run(argv, out="/dev/null"):
    """wall seconds and peak RSS (KiB) of one run.  RSS from GNU time when
    present (a child forked from python would count python's own pages
    before exec), else from wait4."""
    rss_file = f"{tmp}/rss"
    full = [TIME, "-f", "%M", "-o", rss_file] + argv if TIME else argv
    with open(out, "wb") as f:
        t0 = time.perf_counter()
        p = subprocess.Popen(full, stdout=f, stderr=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
        dt = time.perf_counter() - t0
    code = os.waitstatus_to_exitcode(status) if hasattr(os, "waitstatus_to_exitcode") else status >> 8
    if code != 0:
        sys.exit(f"collapsed_stats_pstats: {argv} exited {code}")
    rss = int(open(rss_file).read().split()[-1]) if TIME else ru.ru_maxrss
    return dt, rss

def best(argv, out="/dev/null"):
    runs = [run(argv, out) for _ in range(3)]
    return min(r[0] for r in runs), max(r[1] for r in runs)

big, quarter = f"{tmp}/big.trc", f"{tmp}/quarter.trc"
print(f"trace: {n} samples, {os.path.getsize(big) / 1e6:.1f} MB")
floor_t, floor_rss = best([f"{bindir}/trc-dump", "--summary", big])
print(f"{'reader alone (trc-dump --summary)':38s} {n / floor_t / 1e6:7.2f} M samples/s  peak RSS {floor_rss / 1024:6.1f} MiB")
result("collapsed_stats_pstats", "trc-dump --summary", n / floor_t, "samples/s", f"conv-gen big {n}, wall time, best of 3")
result("collapsed_stats_pstats", "trc-dump --summary.rss", floor_rss, "KiB")
tools = [("trc2collapsed", []), ("trc2collapsed --threads", ["--threads"]),
         ("trc-stats", []), ("trc2pstats", ["-o", f"{tmp}/big.pstats"])]
for name, args in tools:
    exe = f"{bindir}/{name.split()[0]}"
    t, rss = best([exe] + args + [big])
    _, rss_q = run([exe] + args + [quarter])
    print(f"{name:38s} {n / t / 1e6:7.2f} M samples/s  peak RSS {rss / 1024:6.1f} MiB"
          f"  (x{t / floor_t:4.2f} the reader's time; RSS at 1/4 of the samples: {rss_q / 1024:.1f} MiB)")
    result("collapsed_stats_pstats", name, n / t, "samples/s", f"conv-gen big {n}, wall time, best of 3")
    result("collapsed_stats_pstats", name + ".rss", rss, "KiB")
    result("collapsed_stats_pstats", name + ".rss_n_4", rss_q, "KiB", "peak RSS at a quarter of the samples")

# --- pstats: trc2pstats output versus cProfile of a program of the same shape
prog = f"{tmp}/work.py"
with open(prog, "w") as f:
    # 120 distinct functions (cProfile keys by code object: one def each)
    f.write("import random, sys\nrandom.seed(7)\ncalls = [0]\n")
    for i in range(120):
        f.write(f'''
def func_{i}(depth):
    calls[0] += 1
    x = 0
    for k in range(20):
        x += k * {i}
    if depth < 48 and random.random() < 0.7:
        for _ in range(random.choice((1, 1, 2))):
            FUNCS[random.randrange(120)](depth + 1)
    return x
''')
    f.write("FUNCS = [" + ", ".join(f"func_{i}" for i in range(120)) + "]\n")
    f.write("def main():\n    while calls[0] < int(sys.argv[1]):\n        FUNCS[random.randrange(120)](0)\nmain()\n")
ncalls = "300000" if n >= 1000000 else "60000"
t_plain, _ = best([sys.executable, prog, ncalls])
t_prof, _ = best([sys.executable, "-m", "cProfile", "-o", f"{tmp}/cprofile.pstats", prog, ncalls])
def load_time(path):
    code = "import pstats,sys,time; t=time.perf_counter(); s=pstats.Stats(sys.argv[1]); s.sort_stats('cumulative'); print(time.perf_counter()-t, len(s.stats))"
    out = [subprocess.run([sys.executable, "-c", code, path], capture_output=True, text=True, check=True).stdout.split() for _ in range(3)]
    return min(float(o[0]) for o in out), int(out[0][1])
ours, cprof = f"{tmp}/big.pstats", f"{tmp}/cprofile.pstats"
lt_ours, nf_ours = load_time(ours)
lt_cp, nf_cp = load_time(cprof)
s_ours, s_cp = os.path.getsize(ours), os.path.getsize(cprof)
print(f"pstats file, trc2pstats ({n} samples):   {s_ours / 1024:8.1f} KiB, {nf_ours} functions, load {lt_ours * 1e3:6.1f} ms")
print(f"pstats file, python -m cProfile -o:       {s_cp / 1024:8.1f} KiB, {nf_cp} functions, load {lt_cp * 1e3:6.1f} ms")
print(f"ratios trc2pstats / cProfile: size x{s_ours / s_cp:.2f}, load time x{lt_ours / lt_cp:.2f}")
print(f"cProfile slows the program x{t_prof / t_plain:.2f} while it runs ({t_plain:.2f} s -> {t_prof:.2f} s);"
      f" trc2pstats adds no run-time cost (it converts a trace afterwards, {n / best([f'{bindir}/trc2pstats', '-o', f'{tmp}/x.pstats', big])[0] / 1e6:.1f} M samples/s)")
result("collapsed_stats_pstats", "pstats_size_vs_cprofile", s_ours / s_cp, "x",
       f"trc2pstats file {s_ours} B ({nf_ours} functions) / cProfile's {s_cp} B ({nf_cp})")
result("collapsed_stats_pstats", "pstats_load_vs_cprofile", lt_ours / lt_cp, "x",
       f"pstats.Stats() load {lt_ours * 1e3:.1f} ms / {lt_cp * 1e3:.1f} ms")
result("collapsed_stats_pstats", "cprofile_slowdown", t_prof / t_plain, "x",
       f"random-call program, {t_plain:.2f} s -> {t_prof:.2f} s")
EOF
