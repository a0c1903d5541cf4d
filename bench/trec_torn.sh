#!/usr/bin/env bash
# bench/trec_torn.sh — how whole the stacks of a deep, fast-changing
# program come out, measured side by side in one run: fixtures/workloads/
# fidelity_deep.py (a recursion whose depth changes every few
# microseconds between 0 and 60 frames, with its own in-process
# reference sampler) under plain trec and under trec --blocking, runs
# alternated, for one interpreter whose frames are heap objects (before
# 3.11) and one with a data stack (3.11+):
#   - ticks lost to torn reads (dropped after every retry), in %
#   - torn reads retried per tick
#   - the worst depth decile's distance from the reference, in points
#   - the mean depth's distance from the reference's, in frames (< 0:
#     shallower)
#   - trec's CPU per tick (all its CPU / ticks)
# (What --blocking costs the program is measured by bench/trec.sh.)
# BENCH_QUICK=1 shrinks it; TREC_TORN_PYTHONS="py ..." picks interpreters.
# Under bench/run-all each figure also goes to $BENCH_RESULTS (group torn).
set -u
cd "$(dirname "$0")/.."
. bench/lib.bash
. tests/e2e/lib/pythons.sh   # trec_pyenv_root: $PYENV_ROOT or `pyenv root`
BIN="${BIN:-bin}" BUILD="${BUILD:-build}"
TREC="$BIN/trec" STACKS="$BUILD/tests/tools/trc_stacks"
[ -x "$TREC" ] && [ -x "$STACKS" ] || { echo "trec or $STACKS not built"; exit 1; }
if [ "${BENCH_QUICK:-0}" = 1 ]; then ROUNDS=1 SECS=1.5; else ROUNDS=3 SECS=3; fi
T=$(mktemp -d /tmp/trec-torn.XXXXXX)
trap 'rm -rf "$T"' EXIT

pick() {   # the first interpreter of the given minor versions found
  local root p pys=(/usr/bin/python3)
  root=$(trec_pyenv_root) && pys+=("$root"/versions/*/bin/python3)
  for p in "${pys[@]}"; do
    [ -x "$p" ] || continue
    if "$p" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null | grep -qxE "$1"; then
      echo "$p"; return
    fi
  done
}
PYS=${TREC_TORN_PYTHONS:-"$(pick '3\.(8|9|10)') $(pick '3\.1[1-9]')"}
modes="plain"
"$TREC" --help 2>&1 | grep -q -- '--blocking' && modes="plain blocking"

for py in $PYS; do
  ver=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
  echo "interpreter: $py ($ver); $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)"
  for r in $(seq "$ROUNDS"); do
    for m in $modes; do
      flag=""; [ "$m" = blocking ] && flag=--blocking
      out="$T/$ver-$m-$r"
      TREC_SELF_TIMING=1 PYTHONPATH=tests/e2e/lib "$TREC" -q $flag -o "$out.trc" "$py" \
        fixtures/workloads/fidelity_deep.py "$out.json" "$SECS" 2>"$out.err" >/dev/null || continue
      TRC_STACKS_ROOT=main@fidelity_ "$STACKS" "$out.trc" >"$out.txt" 2>/dev/null
    done
  done
  python3 - "$T" "$ver" "$ROUNDS" "$modes" <<'PYEOF'
import json, re, statistics, sys
sys.path.insert(0, "bench")
sys.path.insert(0, "tests/e2e/lib")
from benchres import result
from fidelity_check import read_trace, deciles
import collections
d, ver, rounds, modes = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4].split()
for m in modes:
    torn, retries, depth, mean, cpu = [], [], [], [], []
    for r in range(1, rounds + 1):
        base = "%s/%s-%s-%d" % (d, ver, m, r)
        try:
            ref = json.load(open(base + ".json"))
            err = open(base + ".err").read()
            dep, _, invalid, samples, _ = read_trace(base + ".txt", "main")
        except (OSError, ValueError):
            continue
        st = re.search(r"self-timing: (\d+) ticks.*all CPU ([0-9.]+) ms.*; (\d+) torn reads retried, (\d+) dropped", err)
        if not st:
            continue
        ticks = int(st.group(1))
        torn.append(100.0 * invalid / max(samples + invalid, 1))
        retries.append(int(st.group(3)) / max(ticks, 1))
        cpu.append(1000.0 * float(st.group(2)) / max(ticks, 1))
        rd = collections.Counter({int(k): v for k, v in ref["depth"].items()})
        depth.append(max(abs(a - b) for a, b in zip(deciles(dep), deciles(rd))))
        avg = lambda c: sum(k * v for k, v in c.items()) / max(sum(c.values()), 1)
        mean.append(avg(dep) - avg(rd))
    if not torn:
        print("   %-8s no run completed" % m)
        continue
    md = {k: statistics.median(v) for k, v in
          (("torn", torn), ("retries", retries), ("depth", depth), ("mean", mean), ("cpu", cpu))}
    print("   %-8s torn %.2f %% of ticks, %.3f retries per tick, worst depth decile %.1f points, "
          "mean depth %+.2f frames, trec CPU %.1f us per tick (median of %d)"
          % (m, md["torn"], md["retries"], md["depth"], md["mean"], md["cpu"], len(torn)))
    note = "fidelity_deep.py, CPython %s, median of %d" % (ver, len(torn))
    tag = "heap" if ver in ("3.8", "3.9", "3.10") else "datastack"
    result("torn", "%s_%s_pct" % (tag, m), md["torn"], "pct", note)
    result("torn", "%s_%s_retries" % (tag, m), md["retries"], "per tick", note)
    result("torn", "%s_%s_depth" % (tag, m), md["depth"], "points", note)
    result("torn", "%s_%s_mean" % (tag, m), md["mean"], "frames", note)
    result("torn", "%s_%s_cpu" % (tag, m), md["cpu"], "us", note)
PYEOF
done
