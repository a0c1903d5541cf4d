#!/usr/bin/env bash
# trc2nvvp's text outputs as users run them, over the synthetic GPU
# fixture (tests/support/nvvp_traces.c, written by nvvp-gen
# --write): summary totals equal the generator's sums (kernel time =
# sum of kernel durations), --csv parses with Python's csv module
# (quoted header, units row, one row per activity), the API trace names
# Python call sites, selections, sort/limit, exit codes and messages for
# bad input (the golden outputs are cases of tests/e2e/conv_goldens.sh,
# fixtures/convert/nvvp_*).
# If trc-stats --gpu exists, its kernel total must agree.
set -u
cd "${TRC_ROOT:-$(dirname "$0")/../..}"
BUILD=${BUILD:-build} BIN=${BIN:-bin}
gen=$BUILD/tests/nvvp-gen tool=$BIN/trc2nvvp
for f in "$gen" "$tool"; do [ -x "$f" ] || { echo "FAIL: $f not built"; exit 1; }; done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

"$gen" --write fixture "$tmp/fx.trc" > "$tmp/fx.info" || { echo "FAIL: generator"; exit 1; }
val() { sed -n "s/^$1=//p" "$tmp/fx.info"; }
kernels=$(val kernels) kernel_ns=$(val kernel_ns) memcpys=$(val memcpys) memsets=$(val memsets)
api_calls=$(val api_calls) api_ns=$(val api_ns)

# run NAME EXPECTED_EXIT ARGS...: stdout to $tmp/NAME.out, stderr to .err
run() {
  local name=$1 want=$2
  shift 2
  "$tool" "$@" > "$tmp/$name.out" 2> "$tmp/$name.err"
  local rc=$?
  [ "$rc" = "$want" ] || bad "$name: exit $rc, want $want ($(head -c 300 "$tmp/$name.err"))"
  # the summary ends with the GPU idle headline (checked by
  # tests/e2e/conv_gpu_idle.sh): kept apart in NAME.idle
  if grep -q '^GPU idle time' "$tmp/$name.out"; then
    sed -n '/^GPU idle time/,$p' "$tmp/$name.out" > "$tmp/$name.idle"
    sed -n '1,/^GPU idle time/p' "$tmp/$name.out" | head -n -2 > "$tmp/$name.cut"
    mv "$tmp/$name.cut" "$tmp/$name.out"
  fi
}

# The fixture records a GPU_DROPPED loss: every output is written, exit 1,
# one warning naming the input.
run summary 1 "$tmp/fx.trc"
run summary_csv 1 --csv "$tmp/fx.trc"
run gputrace 1 --print-gpu-trace "$tmp/fx.trc"
run gputrace_csv 1 --print-gpu-trace --csv "$tmp/fx.trc"
run apitrace 1 --print-api-trace "$tmp/fx.trc"
run apitrace_csv 1 --print-api-trace --csv "$tmp/fx.trc"
for n in summary gputrace_csv apitrace; do
  [ "$(wc -l < "$tmp/$n.err")" = 1 ] && grep -q "fx.trc: 12 GPU records dropped" "$tmp/$n.err" ||
    bad "$n: want one loss warning naming the input, got: $(cat "$tmp/$n.err")"
done
grep -q "Warning: 12 GPU activity records were dropped" "$tmp/summary.out" || bad "summary: no loss line"

# Summary shape (nvprof's): header, section labels on first rows only.
python3 - "$tmp/summary.out" <<'EOF' || bad "summary text shape"
import re, sys
lines = open(sys.argv[1]).read().splitlines()
assert re.match(r"^==4242== Profiling result:$", lines[0]), lines[0]
assert lines[1].split() == ["Type", "Time(%)", "Time", "Calls", "Avg", "Min", "Max", "Name"], lines[1]
# after the table: a blank line and the share of GPU time with a Python line
assert lines[-2] == "" and re.fullmatch(r"\d+\.\d\d% of GPU time has a Python line \(direct "
    r"\d+\.\d\d%, via a waiting thread \d+\.\d\d%, none \d+\.\d\d%\)", lines[-1]), lines[-2:]
lines = lines[:-2]
rows = [l for l in lines[2:] if not l.startswith("==")]
labels = [l[:16].strip() for l in rows]
assert labels.count("GPU activities:") == 1 and labels[0] == "GPU activities:", labels
assert labels.count("API calls:") == 1, labels
time_re = r"\d+(\.\d+)?(ns|us|ms|s)"
for l in rows:
    f = l[16:].split(None, 6)
    assert re.fullmatch(r"\d+\.\d\d%", f[0]), l
    for x in (f[1], f[3], f[4], f[5]):
        assert re.fullmatch(time_re, x), (x, l)
    assert f[2].isdigit(), l
EOF

# CSV summary: kernel rows sum to the generator's kernel time exactly
# (microseconds with 3 decimals = ns), API rows to its API time; shares
# of each section sum to 100%.
python3 - "$tmp/summary_csv.out" "$kernel_ns" "$api_ns" "$kernels" <<'EOF' || bad "summary CSV"
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
assert rows[0] == ["Type", "Time(%)", "Time", "Calls", "Avg", "Min", "Max", "Name"], rows[0]
assert rows[1] == ["", "%", "us", "", "us", "us", "us", ""], rows[1]
k_ns = sum(round(float(r[2]) * 1000) for r in rows[2:] if r[0] == "GPU activities" and not r[7].startswith("["))
k_calls = sum(int(r[3]) for r in rows[2:] if r[0] == "GPU activities" and not r[7].startswith("["))
a_ns = sum(round(float(r[2]) * 1000) for r in rows[2:] if r[0] == "API calls")
assert k_ns == int(sys.argv[2]), (k_ns, sys.argv[2])
assert k_calls == int(sys.argv[4]), (k_calls, sys.argv[4])
assert a_ns == int(sys.argv[3]), (a_ns, sys.argv[3])
for sec in ("GPU activities", "API calls"):
    share = sum(float(r[1]) for r in rows[2:] if r[0] == sec)
    assert abs(share - 100) < 0.01, (sec, share)
    times = [float(r[2]) for r in rows[2:] if r[0] == sec]
    assert times == sorted(times, reverse=True), sec
EOF

# CSV GPU trace: nvprof's column names, units row, one row per activity,
# kernel durations sum to the kernel time, rows in start order.
python3 - "$tmp/gputrace_csv.out" "$kernel_ns" $((kernels + memcpys + memsets)) <<'EOF' || bad "GPU trace CSV"
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
hdr = ["Start", "Duration", "Grid X", "Grid Y", "Grid Z", "Block X", "Block Y", "Block Z",
       "Registers Per Thread", "Static SMem", "Dynamic SMem", "Size", "Throughput",
       "SrcMemType", "DstMemType", "Device", "Context", "Stream", "Name", "Correlation_ID"]
assert rows[0] == hdr, rows[0]
assert rows[1] == ["us", "us", "", "", "", "", "", "", "", "B", "B", "B", "MB/s", "", "", "", "", "", "", ""], rows[1]
data = rows[2:]
assert len(data) == int(sys.argv[3]), (len(data), sys.argv[3])
assert all(len(r) == len(hdr) for r in data)
k = sum(round(float(r[1]) * 1000) for r in data if r[2] != "")
assert k == int(sys.argv[2]), (k, sys.argv[2])
starts = [float(r[0]) for r in data]
assert starts == sorted(starts)
for r in data:
    if r[18].startswith("[CUDA memcpy"):
        size, dur, tput = int(r[11]), float(r[1]), float(r[12])
        assert abs(tput - size / (dur * 1e-6) / 1048576) < 0.01, r
        assert r[2] == "" and r[8] == ""
    elif r[2]:
        assert r[11] == "" and r[12] == "" and int(r[8]) > 0
    assert int(r[19]) > 0
EOF

# Text GPU trace: same rows, grid/block as "(20 10 1)", "-" where n/a.
python3 - "$tmp/gputrace.out" $((kernels + memcpys + memsets)) <<'EOF' || bad "GPU trace text"
import re, sys
lines = open(sys.argv[1]).read().split("\n\n")[0].splitlines()
assert lines[0].split()[:4] == ["Start", "Duration", "Grid", "Size"], lines[0]
hdr = lines[0].split()
assert hdr[-2:] == ["Name", "Correlation_ID"] and "SrcMemType" in hdr and "Regs*" in hdr, hdr
rows = lines[1:]
assert len(rows) == int(sys.argv[2]), len(rows)
for l in rows:
    if "[CUDA" in l:
        assert re.search(r"\s-\s+-\s+-\s+-\s+-\s+\d", l), l
    else:
        assert re.search(r"\(\d+ \d+ \d+\)\s+\(\d+ \d+ \d+\)", l), l
    assert re.match(r"^\s+\d+\.\d+(ns|us|ms|s)\s+\d", l) or re.match(r"^\s+\d+(ns)\s", l), l
EOF

# API trace: one row per call; launches from Python name their call site,
# autograd launches have none.
python3 - "$tmp/apitrace_csv.out" "$api_calls" <<'EOF' || bad "API trace CSV"
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
assert rows[0] == ["Start", "Duration", "Name", "Correlation_ID", "Thread", "Source"], rows[0]
assert rows[1] == ["us", "us", "", "", "", ""], rows[1]
data = rows[2:]
assert len(data) == int(sys.argv[2])
fwd = [r for r in data if r[3] == "102" and r[2] == "cudaLaunchKernel"]
assert fwd and fwd[0][5] == "proj/model.py:17(Model.forward)" and fwd[0][4] == "4242", fwd
grad = [r for r in data if r[4] == "4250"]
assert len(grad) == 6 and all(r[5] == "" for r in grad), grad
assert any(r[5] == "proj/data.py:9(load_batch)" for r in data)
EOF

# Selections: a window keeps the activities overlapping it; --pid of a
# process not in the trace is said to match nothing; stdin works.
run window 1 --print-gpu-trace --csv --from 0.006 --to 0.012 "$tmp/fx.trc"
python3 - "$tmp/window.out" <<'EOF' || bad "--from/--to window"
import csv, sys
data = list(csv.reader(open(sys.argv[1], newline="")))[2:]
assert 0 < len(data) < 30, len(data)
for r in data:
    s, d = float(r[0]), float(r[1])
    assert s + d >= 6000 and s < 12000, r
EOF
run otherpid 1 --pid 1 "$tmp/fx.trc"
[ -s "$tmp/otherpid.out" ] && bad "--pid 1 (no such process in the trace) wrote output"
grep -q "^trc2nvvp: warning: .*: --pid '1' matches no process (processes: " "$tmp/otherpid.err" ||
  bad "--pid 1: want a warning that it matches no process: $(cat "$tmp/otherpid.err")"
# a window with no activity in it: the empty summary
run nowindow 1 --from 1000 "$tmp/fx.trc"
grep -q "No GPU activities or CUDA API calls" "$tmp/nowindow.out" || bad "--from 1000: want an empty summary"
run stdin 1 - < "$tmp/fx.trc"
cmp -s "$tmp/stdin.out" "$tmp/summary.out" && cmp -s "$tmp/stdin.idle" "$tmp/summary.idle" ||
  bad "stdin input differs from the file input"

# --sort and --limit
run sorted 1 --sort calls --limit 3 "$tmp/fx.trc"
python3 - "$tmp/sorted.out" <<'EOF' || bad "--sort calls --limit 3"
import sys
rows = [l for l in open(sys.argv[1]).read().splitlines()[2:-2] if not l.startswith("==")]
assert len(rows) == 6, rows
calls = [int(l[16:].split()[2]) for l in rows]
assert calls[:3] == sorted(calls[:3], reverse=True) and calls[3:] == sorted(calls[3:], reverse=True), calls
assert calls[3] == 18  # cudaLaunchKernel: most API calls
EOF

# Usage errors and unusable input: exit 2, one line, no output file.
run nosuch 2 "$tmp/missing.trc"
grep -q "missing.trc" "$tmp/nosuch.err" || bad "missing file: message does not name it"
printf 'not a trace at all\n' > "$tmp/junk.trc"
run junk 2 "$tmp/junk.trc"
run badsort 2 --sort bogus "$tmp/fx.trc"
run svgcsv 2 --svg "$tmp/x.svg" --csv "$tmp/fx.trc"
[ -e "$tmp/x.svg" ] && bad "--svg with --csv left a file"
run badwidth 2 --width 5 --svg "$tmp/x.svg" "$tmp/fx.trc"
run notsvgwidth 2 --width 900 "$tmp/fx.trc"
# A truncated trace: what was readable is shown, exit 1.
head -c $(( $(wc -c < "$tmp/fx.trc") * 2 / 3 )) "$tmp/fx.trc" > "$tmp/cut.trc"
run cut 1 --print-gpu-trace "$tmp/cut.trc"
n=$(grep -c "CUDA memcpy\|kernel\|elementwise" "$tmp/cut.out")
[ "$n" -gt 0 ] && [ "$n" -lt $((kernels + memcpys + memsets)) ] || bad "truncated input: $n rows"

# Other tools must agree on the kernel time, when they can tell it.
if [ -x "$BIN/trc-stats" ] && "$BIN/trc-stats" --help 2>/dev/null | grep -q -- "--gpu"; then
  if "$BIN/trc-stats" --gpu "$tmp/fx.trc" > "$tmp/stats.out" 2>/dev/null || [ $? = 1 ]; then
    grep -q "GPU activities" "$tmp/stats.out" &&
      ! grep -q "9.0000ms *6 .*gemm_kernel" "$tmp/stats.out" &&
      bad "trc-stats --gpu disagrees on gemm_kernel's time (want 9.0000ms over 6 calls)"
  fi
fi

# The golden outputs of both fixtures are cases of tests/e2e/conv_goldens.sh
# (fixtures/convert/nvvp_*).
# The recording path's own fixture (fake CUPTI, fixtures/gpu/, owned by the
# GPU recorder): every text view runs, and the summary must equal the one
# that fixture pins for trc-stats --gpu.  Regenerating that fixture means
# reviewing and updating its goldens (UPDATE_GOLDEN=1 conv_goldens.sh).
ft=fixtures/gpu/fake_train.trc
if [ -f "$ft" ]; then
  run ft_summary 1 "$ft"
  run ft_gputrace 1 --print-gpu-trace "$ft"
  run ft_gputrace_csv 1 --print-gpu-trace --csv "$ft"
  run ft_apitrace 1 --print-api-trace "$ft"
  if [ -f fixtures/gpu/fake_train.summary.txt ]; then
    # the table; the share line after it is conv_folded_gpu.sh's
    cmp -s <(head -n -2 "$tmp/ft_summary.out") fixtures/gpu/fake_train.summary.txt ||
      bad "trc2nvvp's summary of $ft differs from fixtures/gpu/fake_train.summary.txt"
  fi
fi

[ $fails -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "nvvp text outputs: all checks passed"
