#!/usr/bin/env bash
# retry-once: counts samples of a live recording against the clock.
# NVML counters through trec: with TREC_NVML_LIB naming the fake
# libnvidia-ml (tests/gpu/fake_nvml.c: two devices, fixed readings), the
# trace holds gpu.util, gpu.mem.used, gpu.sm_clock and gpu.power for each
# device, with their units and values, about --gpu-rate x duration
# samples each.  Without an NVML library trec records as before, silently.
set -u
fake="$BUILD/tests/libfake-nvml.so"
[ -f "$fake" ] || { echo "$fake not built (make test builds it)"; exit 77; }
py=$(command -v python3) || { echo "no python3"; exit 77; }
fake=$(realpath "$fake")
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/prog.py" <<'PY'
import time
t = time.monotonic()
while time.monotonic() - t < 0.5:
    sum(range(1000))
PY
rate=40
TREC_NVML_LIB="$fake" "$BIN/trec" --no-gpu --gpu-rate $rate -o "$tmp/nv.trc" "$py" "$tmp/prog.py" 2>"$tmp/err" ||
  { cat "$tmp/err"; echo "FAIL: trec with the fake NVML"; exit 1; }
"$BIN/trc-dump" --check "$tmp/nv.trc" >/dev/null || { echo "FAIL: trace does not check clean"; exit 1; }
# --no-gpu turns NVML off too: the run above must have no counters ...
"$BIN/trc-dump" --events "$tmp/nv.trc" | grep -q 'name="gpu\.' &&
  { echo "FAIL: --no-gpu still sampled NVML"; exit 1; }
TREC_NVML_LIB="$fake" "$BIN/trec" --gpu-rate $rate -o "$tmp/nv.trc" "$py" "$tmp/prog.py" 2>"$tmp/err" ||
  { cat "$tmp/err"; echo "FAIL: trec with the fake NVML"; exit 1; }
"$BIN/trc-dump" --check "$tmp/nv.trc" >/dev/null || { echo "FAIL: trace does not check clean"; exit 1; }
"$BIN/trc-dump" --events "$tmp/nv.trc" >"$tmp/ev"
dur=$("$BIN/trc-dump" --summary "$tmp/nv.trc" | sed -n 's/^time: .*(\([0-9.]*\) s)$/\1/p')
[ -n "$dur" ] || { echo "FAIL: no time span in the summary"; exit 1; }

# Each (counter, device): unit, every value as the fake reports it, count
# within [0.5, 1.3] x rate x duration (+3 for the start and end samples).
awk -v rate=$rate -v dur="$dur" '
  /^counter_def / {
    match($0, /name="[^"]*"/); n = substr($0, RSTART + 6, RLENGTH - 7)
    match($0, /unit="[^"]*"/); u = substr($0, RSTART + 6, RLENGTH - 7)
    match($0, /device=[0-9-]*/); d = substr($0, RSTART + 7, RLENGTH - 7)
    match($0, /id=[0-9]*/); id = substr($0, RSTART + 3, RLENGTH - 3)
    name[id] = n; dev[id] = d; unit[n "/" d] = u; next
  }
  /^counter counter="gpu\./ {
    match($0, /value=[0-9.e+-]*/); v = substr($0, RSTART + 6, RLENGTH - 6) + 0
    match($0, /counter="[^"]*"/); n = substr($0, RSTART + 9, RLENGTH - 10)
    # which device: the one whose reading it is (both report the same
    # SM clock: those are shared out by count)
    if (n == "gpu.sm_clock" && v == 1980) { clk++; next }
    for (id in name) if (name[id] == n && want(n, dev[id]) == v) { k = n "/" dev[id]; got[k]++; next }
    printf "FAIL: %s value %s is no device'"'"'s reading\n", n, v; bad = 1
  }
  function want(n, d) {
    if (n == "gpu.util") return 40 + d
    if (n == "gpu.mem.used") return (d + 1) * 1073741824
    if (n == "gpu.sm_clock") return 1980
    if (n == "gpu.power") return 300000 + 1000 * d
    return -1
  }
  END {
    split("gpu.util:percent gpu.mem.used:bytes gpu.sm_clock:MHz gpu.power:mW", cs, " ")
    lo = 0.5 * rate * dur; hi = 1.3 * rate * dur + 3
    got["gpu.sm_clock/0"] = got["gpu.sm_clock/1"] = clk / 2
    for (i in cs) for (d = 0; d < 2; d++) {
      split(cs[i], p, ":"); k = p[1] "/" d
      if (unit[k] != p[2]) { printf "FAIL: %s unit \"%s\", want %s\n", k, unit[k], p[2]; bad = 1 }
      if (got[k] < lo || got[k] > hi) { printf "FAIL: %s: %d samples, want %.0f..%.0f\n", k, got[k], lo, hi; bad = 1 }
      else printf "%s: %d samples (%.2f s at %d Hz)\n", k, got[k], dur, rate
    }
    exit bad
  }' "$tmp/ev" || exit 1

# No NVML library: the same recording, no counters, no word about it.
TREC_NVML_LIB=/nonexistent/libnvidia-ml.so.1 "$BIN/trec" -o "$tmp/none.trc" "$py" "$tmp/prog.py" 2>"$tmp/err" ||
  { cat "$tmp/err"; echo "FAIL: trec without NVML"; exit 1; }
grep -v '^trec: [0-9]* samples' "$tmp/err" | grep . && { echo "FAIL: trec said more than its summary"; exit 1; }
"$BIN/trc-dump" --check "$tmp/none.trc" >/dev/null || { echo "FAIL: trace does not check clean"; exit 1; }
"$BIN/trc-dump" --events "$tmp/none.trc" | grep -q 'name="gpu\.' && { echo "FAIL: counters without NVML"; exit 1; }
"$BIN/trc-dump" --events "$tmp/none.trc" | grep -q '^sample' || { echo "FAIL: no samples"; exit 1; }
echo ok
