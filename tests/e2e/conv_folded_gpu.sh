#!/usr/bin/env bash
# GPU time in trc2collapsed --gpu, trc-stats --gpu / --gpu-callsites and
# trc2pstats --gpu, on the recording path's fixture (fixtures/gpu/
# fake_train.trc, fake CUPTI) and on trc2nvvp's synthetic GPU trace:
#  - trc-stats --gpu prints exactly fixtures/gpu/fake_train.summary.txt,
#    then the share line;
#  - the total of `trc2collapsed --gpu --weight us` equals the GPU
#    activities' total from `trc2nvvp --csv` rounded to the nearest us,
#    exactly (counts are apportioned by largest remainder); --weight
#    samples counts every activity once;
#  - `trc2pstats --gpu` loads with pstats under every Python found; its
#    tottime sums to the same total (to 1 ns) and each leaf's tottime and
#    call count equal that kernel's/copy's row of the nvprof summary;
#  - every line is an independent reading of `trc-dump --events`: the
#    launching API call's Python stack (same pid and correlation id), then
#    the activity's name as the leaf, or <no Python stack> / <unknown launch>;
#    a launch without Python frames goes to the stack of a thread of its
#    process whose samples or sync call cover the launch (known to wait
#    first: in a sync call or sampled off CPU in a waiting function; then
#    off CPU; then on CPU; then the first thread defined) with a
#    [via thread TID NAME] frame (docs/gpu.md "Which line launched this
#    kernel?");
#  - the share of GPU time with a Python line (direct, via, none), and
#    per device when there are several, that
#    trc-stats --gpu, --gpu-callsites and trc2nvvp print, trc2collapsed
#    --gpu notes on stderr, trc2flamegraph --gpu ends its subtitle with,
#    trc2speedscope ends the file's name with and trc2chrome puts in
#    otherData and on each GPU process (label, instant event: with several
#    devices, that device's own part of the line), and trc-lines'
#    gpu_via_ns, equal that reading's;
#  - selections: --thread keeps what those threads launched, --from/--to
#    keep activities in the window even when their launch call is before
#    it, --pid; exit codes and the one loss warning; stdin.
set -u
cd "${TRC_ROOT:-$(dirname "$0")/../..}"
BUILD=${BUILD:-build} BIN=${BIN:-bin}
ft=fixtures/gpu/fake_train.trc
for f in "$BIN/trc2collapsed" "$BIN/trc-stats" "$BIN/trc2pstats" "$BIN/trc-dump" "$ft"; do
  [ -e "$f" ] || { echo "FAIL: $f missing"; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
pythons=()
. tests/e2e/lib/pythons.sh
while read -r p _; do pythons+=("$p"); done < <(trec_pythons)
[ ${#pythons[@]} -gt 0 ] || { echo "no Python 3.8+ found"; exit 77; }
py=${pythons[0]}

# run NAME WANT_EXIT TOOL ARGS...: stdout to $tmp/NAME.out, stderr .err
run() {
  local name=$1 want=$2 tool=$3
  shift 3
  "$BIN/$tool" "$@" > "$tmp/$name.out" 2> "$tmp/$name.err"
  local rc=$?
  [ "$rc" = "$want" ] || bad "$name: exit $rc, want $want ($(head -c 300 "$tmp/$name.err"))"
}

# ---- nvprof's summary --------------------------------------------------
# (the table; then a blank line and the share of GPU time with a Python
# line, checked against the independent reading below)
run summary 1 trc-stats --gpu "$ft"
# the summary, then the share line and the idle headline (checked below
# and by tests/e2e/conv_gpu_idle.sh): the table is what comes before the
# blank line ahead of the share line
awk '/% of GPU time has a Python line/{exit} {print}' "$tmp/summary.out" | head -n -1 > "$tmp/summary.only"
cmp -s "$tmp/summary.only" fixtures/gpu/fake_train.summary.txt ||
  { bad "trc-stats --gpu differs from fixtures/gpu/fake_train.summary.txt"; diff fixtures/gpu/fake_train.summary.txt "$tmp/summary.only" | head; }
[ "$(wc -l < "$tmp/summary.err")" = 1 ] && grep -q "^trc-stats: warning: .*fake_train.trc: 4 GPU records dropped" "$tmp/summary.err" ||
  bad "summary: want one loss warning, got: $(cat "$tmp/summary.err")"
"$BIN/trc-stats" --help | grep -q -- "--gpu-callsites" || bad "--help does not list --gpu-callsites"
run combo 2 trc-stats --gpu --sort tottime "$ft"
grep -q "takes no" "$tmp/combo.err" || bad "--gpu --sort: $(cat "$tmp/combo.err")"

# ---- one trace through every view -------------------------------------
# check TRACE TAG: the checks listed at the top, for one trace
check() {
  local trc=$1 tag=$2
  if [ -x "$BIN/trc2nvvp" ]; then
    "$BIN/trc2nvvp" --csv "$trc" > "$tmp/$tag.csv" 2>/dev/null
  else
    : > "$tmp/$tag.csv"
  fi
  "$BIN/trc-dump" --events "$trc" > "$tmp/$tag.events" 2>/dev/null
  run "$tag.us" 1 trc2collapsed --gpu --weight us --full-filenames "$trc"
  run "$tag.default" 1 trc2collapsed --gpu --full-filenames "$trc"
  run "$tag.samples" 1 trc2collapsed --gpu --weight samples --full-filenames "$trc"
  run "$tag.pstats" 1 trc2pstats --gpu -o "$tmp/$tag.prof" "$trc"
  run "$tag.table" 1 trc-stats --gpu-callsites "$trc"
  cmp -s "$tmp/$tag.us.out" "$tmp/$tag.default.out" || bad "$tag: --gpu is not --weight us by default"
  for n in us pstats table; do
    # trc2collapsed --gpu also notes the share line on stderr (checked below)
    [ "$(grep -vc 'has a Python line' "$tmp/$tag.$n.err")" = 1 ] && grep -q "warning: .*GPU records dropped" "$tmp/$tag.$n.err" ||
      bad "$tag.$n: want one loss warning, got: $(cat "$tmp/$tag.$n.err")"
  done
  # the portable folded grammar; perl's flamegraph.pl parse ignores nothing
  grep -vqE '^[^ ]+( [^ ]+)* [0-9]+$' "$tmp/$tag.us.out" && bad "$tag: lines outside the folded grammar"
  perl -ne 'chomp; my ($s, $n) = (/^(.*)\s+?(\d+(?:\.\d*)?)$/); $ign++ unless defined $n and $s ne "";
            END { exit($ign ? 1 : 0) }' "$tmp/$tag.us.out" || bad "$tag: flamegraph.pl would ignore lines"
  "$py" - "$tmp/$tag" <<'EOF' || bad "$tag: views disagree (see above)"
import csv, re, sys
from collections import defaultdict
base = sys.argv[1]
def folded(path):
    d = {}
    for line in open(path, encoding="utf-8").read().splitlines():
        stack, _, n = line.rpartition(" ")
        assert stack not in d, ("duplicate line", stack)
        d[stack] = int(n)
    return d
us, counts = folded(base + ".us.out"), folded(base + ".samples.out")

# trc-dump --events, read independently of lib/export: launch calls by
# (pid, correlation), then each activity charged to its call's stack.
copy = {0: "[CUDA memcpy]", 1: "[CUDA memcpy HtoD]", 2: "[CUDA memcpy DtoH]", 3: "[CUDA memcpy HtoA]",
        4: "[CUDA memcpy AtoH]", 5: "[CUDA memcpy AtoA]", 6: "[CUDA memcpy AtoD]", 7: "[CUDA memcpy DtoA]",
        8: "[CUDA memcpy DtoD]", 9: "[CUDA memcpy HtoH]", 10: "[CUDA memcpy PtoP]"}
def ns(s):
    a, b = s.split(".")
    return int(a) * 10**9 + int(b.ljust(9, "0"))
def frames(st):
    out = []
    for m in re.finditer(r'"((?:[^"\\]|\\.)*)"@"((?:[^"\\]|\\.)*)"(?::(\d+))?', st):
        fn, fl, ln = m.group(1), m.group(2), m.group(3)
        out.append(fn + (" (%s%s)" % (fl, ":" + ln if ln and ln != "0" else "") if fl else ""))
    return out
calls, acts = {}, []
# the waiting-thread rule (docs/gpu.md), read from the samples: per
# thread in definition order, its samples with a stack as (from, to,
# stack, on_cpu, line number), a run lasting one period after its last
# sample; and its sync calls with a Python stack as (from, to, stack,
# line number).  What counts for a launch is what was read before the
# later of the launch call and its activity (the converters read once).
WAITING = {"backward", "run_backward", "_engine_run_backward", "join", "_wait_for_tstate_lock",
           "wait", "acquire", "synchronize"}
order, names, runs, syncs = {}, {}, defaultdict(list), defaultdict(list)
def leaf_function(st):
    m = re.findall(r'"((?:[^"\\]|\\.)*)"@', st)
    return m[-1] if m else None
for at, line in enumerate(open(base + ".events", encoding="utf-8")):
    kind = line.split(" ", 1)[0]
    f = dict(re.findall(r'(\w+)=("(?:[^"\\]|\\.)*"|\S+)', line))
    if kind == "thread":
        key = f["pid"] + "/" + f["tid"]
        order.setdefault(key, len(order))
        names[key] = f["name"][1:-1]
    elif kind == "sample":
        st = re.search(r" stack=(.*?) flags=", line).group(1)
        # only a stack with a Python frame waits; trc-dump prints a
        # frame's file after "@", which Python frames always have and
        # trec's "[native thread NAME]" frame never has
        if st != "-" and '"@"' in st:
            t0 = ns(f["time"])
            runs[f["thread"]].append((t0, t0 + int(f["span_ns"]) + int(f["weight_ns"]), st,
                                      int(f["flags"], 16) & 1, at, int(f["weight_ns"])))
    elif kind == "api_call":
        pid = f["thread"].split("/")[0]
        corr = int(f["correlation"])
        st = re.search(r" stack=(.*?) result=", line).group(1)
        flags = int(f["flags"], 16)
        if corr and (flags & 2 or st != "-"):
            calls.setdefault((pid, corr), (st, flags, f["thread"], ns(f["start"]), at))
        if flags & 4 and not flags & 1 and st != "-" and ns(f["end"]) > ns(f["start"]):
            syncs[f["thread"]].append((ns(f["start"]), ns(f["end"]), st, at))
    elif kind in ("gpu_kernel", "gpu_memcpy", "gpu_memset"):
        name = (f["name"][1:-1] if kind == "gpu_kernel" else
                copy.get(int(f["copy_kind"]), "[CUDA memcpy]") if kind == "gpu_memcpy" else "[CUDA memset]")
        acts.append((f["pid"], int(f["correlation"]), name, ns(f["end"]) - ns(f["start"]),
                     int(f["device"]), at))
want_ns, want_n = defaultdict(int), defaultdict(int)
share = [0, 0, 0]  # ns: direct, via a waiting thread, none
dev_share = defaultdict(lambda: [0, 0, 0])  # the same per device
def wait_rank(th, t, seen):
    # 0 known to wait (a sync call, or a known waiting function, on CPU
    # or off), 1 off CPU, 2 on CPU, None not a candidate; and the stack:
    # the sync call's, else the thread's sample nearest to t (the one
    # covering t, by its last sample, or the next, within one period)
    for y in syncs[th]:
        if y[3] < seen and y[0] <= t < y[1]:
            return 0, y[2]
    mine = [r for r in runs[th] if r[4] < seen]
    cover = [r for r in mine if r[0] <= t < r[1]]
    r = max(cover, key=lambda r: r[0]) if cover else None
    later = [x for x in mine if x[0] > t]
    nxt = min(later, key=lambda x: x[0]) if later else None
    before = t - (r[1] - r[5]) if r else float("inf")
    if nxt and nxt[0] - t <= nxt[5] and nxt[0] - t < before:
        r = nxt
    if r is None:
        return None, None
    return (0 if leaf_function(r[2]) in WAITING else 2 if r[3] else 1), r[2]
for pid, corr, name, d, dev, at in acts:
    c = calls.get((pid, corr))
    how = 2
    if c is None:
        root = ["<unknown launch>"]
    elif c[1] & 1 or c[0] == "-":
        root = ["<no Python stack>"]
        best = None
        for th in set(runs) | set(syncs):
            if th.split("/")[0] != pid or th == c[2]:
                continue
            rank, st = wait_rank(th, c[3], max(at, c[4]))
            if rank is not None and (best is None or (rank, order[th]) < best[0]):
                best = ((rank, order[th]), st)
        if best:
            tid = c[2].split("/")[1]
            root = frames(best[1]) + ["[via thread %s %s]" % (tid, names[c[2]])]
            how = 1
    else:
        root = frames(c[0])
        how = 0
    key = ";".join(root + [name])
    share[how] += d
    dev_share[dev][how] += d
    want_ns[key] += d
    want_n[key] += 1
total_ns = sum(want_ns.values())
assert counts == dict(want_n), ("--weight samples", counts, dict(want_n))
assert sum(us.values()) == (total_ns + 500) // 1000, (sum(us.values()), total_ns)
for k, v in want_ns.items():
    assert abs(us.get(k, 0) * 1000 - v) < 1000, (k, us.get(k), v)
leaves = {k.rsplit(";", 1)[1] for k in us}
names = {a[2] for a in acts}
assert leaves <= names, leaves - names

# nvprof's CSV summary: same total and the same per-name figures
rows = [r for r in csv.reader(open(base + ".csv", newline=""))][2:]
gpu = [r for r in rows if r and r[0] == "GPU activities"]
if gpu:
    csv_ns = sum(round(float(r[2]) * 1000) for r in gpu)
    assert csv_ns == total_ns, (csv_ns, total_ns)
    assert sum(us.values()) == (csv_ns + 500) // 1000
    assert {r[7] for r in gpu} == names, ({r[7] for r in gpu} ^ names)
    open(base + ".rows", "w").write(repr([(r[7], round(float(r[2]) * 1000), int(r[3])) for r in gpu]))
open(base + ".total", "w").write(str(total_ns))
# the share line every GPU view prints: hundredths of a percent, half up
def pcs(sh):
    all_ns = sum(sh)
    pc = lambda part: "%d.%02d%%" % divmod((part * 10000 + all_ns // 2) // all_ns, 100)
    return (pc(sh[0] + sh[1]), pc(sh[0]), pc(sh[1]), pc(sh[2]))
open(base + ".via", "w").write(str(share[1]))
line = "%s of GPU time has a Python line (direct %s, via a waiting thread %s, none %s)" % pcs(share)
# several devices: each one's, by device number
if len(dev_share) > 1:
    for dev in sorted(dev_share):
        line += "; device %d: %s (direct %s, via a waiting thread %s, none %s)" % ((dev,) + pcs(dev_share[dev]))
open(base + ".share", "w").write(line + "\n")
print("ok", len(us), "lines,", total_ns, "ns")
EOF
  local total
  total=$(cat "$tmp/$tag.total" 2>/dev/null || echo 0)
  # the share of GPU time with a Python line, in each view that prints it
  run "$tag.summary" 1 trc-stats --gpu "$trc"
  # (the idle headline follows it: tests/e2e/conv_gpu_idle.sh)
  cmp -s <(grep '% of GPU time has a Python line' "$tmp/$tag.summary.out") "$tmp/$tag.share" ||
    bad "$tag: trc-stats --gpu share: $(grep 'has a Python line' "$tmp/$tag.summary.out") want $(cat "$tmp/$tag.share")"
  cmp -s <(sed -n 's/^lines:      //p' "$tmp/$tag.table.out") "$tmp/$tag.share" ||
    bad "$tag: trc-stats --gpu-callsites share: $(grep '^lines:' "$tmp/$tag.table.out")"
  if [ -x "$BIN/trc-lines" ]; then
    "$BIN/trc-lines" --json "$trc" 2>/dev/null |
      "$py" -c 'import json, sys; print(json.load(sys.stdin)["gpu_via_ns"])' |
      cmp -s - <(cat "$tmp/$tag.via"; echo) || bad "$tag: trc-lines gpu_via_ns is not $(cat "$tmp/$tag.via")"
  fi
  if [ -x "$BIN/trc2nvvp" ]; then
    "$BIN/trc2nvvp" "$trc" 2>/dev/null | grep '% of GPU time has a Python line' | cmp -s - "$tmp/$tag.share" ||
      bad "$tag: trc2nvvp share differs from $(cat "$tmp/$tag.share")"
  fi
  # trc2collapsed --gpu: one note on stderr (stdout is for flamegraph.pl)
  cmp -s <(sed -n 's/^trc2collapsed: \(.*has a Python line.*\)$/\1/p' "$tmp/$tag.us.err") "$tmp/$tag.share" ||
    bad "$tag: trc2collapsed --gpu share: $(grep 'has a Python line' "$tmp/$tag.us.err")"
  # trc2flamegraph --gpu: the end of the subtitle, read back by xmllint
  "$BIN/trc2flamegraph" --gpu -o "$tmp/$tag.svg" "$trc" 2>/dev/null
  cmp -s <(xmllint --xpath 'string(//*[@id="subtitle"])' "$tmp/$tag.svg") \
    <(printf 'GPU time (us) by launch site; '; cat "$tmp/$tag.share") ||
    bad "$tag: trc2flamegraph --gpu subtitle: $(xmllint --xpath 'string(//*[@id="subtitle"])' "$tmp/$tag.svg")"
  # trc2speedscope: the end of the file's name; trc2chrome: each GPU
  # process's label and instant event, and otherData
  "$BIN/trc2speedscope" -o "$tmp/$tag.ss.json" "$trc" 2>/dev/null
  "$BIN/trc2chrome" -o "$tmp/$tag.trace.json" "$trc" 2>/dev/null
  "$py" - "$tmp/$tag.ss.json" "$tmp/$tag.trace.json" "$tmp/$tag.share" <<'EOF' || bad "$tag: speedscope/chrome share"
import json, sys
share = open(sys.argv[3]).read().rstrip("\n")
name = json.load(open(sys.argv[1]))["name"]
assert name.endswith(": " + share), (name, share)
d = json.load(open(sys.argv[2]))
ev = d["traceEvents"]
gpu = {e["pid"] for e in ev if e.get("ph") == "X" and e["pid"] >= 0x7fff0000}
labels = {e["pid"]: e["args"]["labels"] for e in ev if e.get("name") == "process_labels"}
marks = {e["pid"]: e["name"] for e in ev if e.get("ph") == "i" and e.get("cat") == "gpu"}
# one device: the whole line; several: each device's own part of it
parts = share.split("; ")
want = ({p: share for p in gpu} if len(parts) == 1 else
        {p: part for p in gpu for part in parts[1:]
         if part.startswith("device %d: " % (p - 0x7fff0000))})
assert gpu and labels == want and marks == labels, (gpu, labels, marks)
assert d["otherData"]["gpu_python_lines"] == share, d["otherData"]
EOF
  for p in "${pythons[@]}"; do
    "$p" - "$tmp/$tag.prof" "$total" "$tmp/$tag.rows" <<'EOF' || bad "$tag: pstats under $p"
import os, pstats, sys
s = pstats.Stats(sys.argv[1])
total = int(sys.argv[2])
tt = sum(v[2] for v in s.stats.values())
assert abs(tt - total / 1e9) < 1e-9, (tt, total)
assert abs(s.total_tt - total / 1e9) < 1e-9
for key, (cc, nc, t, ct, callers) in s.stats.items():
    for c in callers:
        assert c in s.stats, ("caller not a key", c)
if os.path.exists(sys.argv[3]):
    for name, ns, calls in eval(open(sys.argv[3]).read()):
        cc, nc, t, ct, _ = s.stats[("~", 0, name)]
        assert abs(t * 1e9 - ns) < 1, (name, t, ns)
        assert nc == calls, (name, nc, calls)
s.sort_stats("cumulative").print_stats(3)
EOF
  done > /dev/null
  # trc-stats --gpu-callsites: the same numbers as the pstats file
  "$py" - "$tmp/$tag.prof" "$tmp/$tag.table.out" "$total" <<'EOF' || bad "$tag: trc-stats --gpu-callsites"
import pstats, re, sys
s = pstats.Stats(sys.argv[1])
text = open(sys.argv[2], encoding="utf-8").read()
total = int(sys.argv[3])
m = re.search(r"(\d+) function calls in ([\d.]+) seconds", text)
assert m and abs(float(m.group(2)) - total / 1e9) < 1e-6, m
assert int(m.group(1)) == sum(v[1] for v in s.stats.values())
assert re.search(r"GPU time: +\d+ activities .*, %.6f s" % (total / 1e9), text), text[:400]
rows = text.split("filename:lineno(function)\n", 1)[1].strip().splitlines()
assert len(rows) == len(s.stats), (len(rows), len(s.stats))
EOF
}

check "$ft" ft
# what the fixture's views look like, in words: the forward's gemm at model.py:13
grep -q '^<module> (train.py:40);main (train.py:33);Model.forward (model.py:13);ampere_sgemm_128x64_nn 300$' "$tmp/ft.us.out" ||
  bad "fixture: gemm line missing: $(cat "$tmp/ft.us.out")"
grep -q '^<no Python stack>;void at::native::vectorized_elementwise_kernel<4, .* 10$' "$tmp/ft.us.out" ||
  bad "fixture: the no-Python launch is not under <no Python stack>"

if [ -x "$BUILD/tests/nvvp-gen" ]; then
  "$BUILD/tests/nvvp-gen" --write fixture "$tmp/nv.trc" > /dev/null || bad "nvvp generator"
  check "$tmp/nv.trc" nv
  # --thread: the autograd worker launched only the no-Python kernels,
  # charged via the main thread, which waits in compute_loss meanwhile
  run nv_thr 1 trc2collapsed --gpu --thread pt_autograd_0 "$tmp/nv.trc"
  [ -s "$tmp/nv_thr.out" ] && ! grep -qv '^<module> (proj/train.py:88);main (proj/train.py:80);train_step (proj/train.py:42);compute_loss (proj/train.py:55);\[via thread 4250 pt_autograd_0\];' "$tmp/nv_thr.out" ||
    bad "--thread pt_autograd_0: $(head -3 "$tmp/nv_thr.out")"
  run nv_main 1 trc2collapsed --gpu --thread 4242 "$tmp/nv.trc"
  grep -q '^<no Python stack>\|^<unknown launch>' "$tmp/nv_main.out" && bad "--thread 4242 kept work not launched by it"
  a=$(awk '{s+=$NF} END {print s+0}' "$tmp/nv_thr.out") b=$(awk '{s+=$NF} END {print s+0}' "$tmp/nv_main.out")
  t=$(awk '{s+=$NF} END {print s+0}' "$tmp/nv.us.out")
  [ $((a + b)) = "$t" ] || bad "--thread split $a + $b != $t"
  # two devices and threads competing to be the waiting one
  # (tests/support/nvvp_traces.h, nvvp_trace_write_two_devices): the
  # derivation above, and what the construction says in words
  "$BUILD/tests/nvvp-gen" --write two-devices "$tmp/two.trc" > /dev/null || bad "nvvp generator (two devices)"
  check "$tmp/two.trc" two
  # device 0: 1000 us direct, 300 us via; device 1: 200 direct, 600 via, 200 none
  want='91.30% of GPU time has a Python line (direct 52.17%, via a waiting thread 39.13%, none 8.70%); device 0: 100.00% (direct 76.92%, via a waiting thread 23.08%, none 0.00%); device 1: 80.00% (direct 20.00%, via a waiting thread 60.00%, none 20.00%)'
  [ "$(cat "$tmp/two.share" 2>/dev/null)" = "$want" ] || bad "two devices: derived share $(cat "$tmp/two.share" 2>/dev/null), want $want"
  # at 5 ms both the loader (defined first) and the main thread are off
  # CPU: the main thread, in backward, is known to wait, so the autograd
  # launch is its (the rule without "known to wait" gives the loader)
  grep -qx '<module> (/home/ada/proj/train.py:88);main (/home/ada/proj/train.py:80);backward (/home/ada/proj/train.py:60);\[via thread 4250 pt_autograd_0\];void relu_kernel<float>(float\*, int) 600' "$tmp/two.us.out" ||
    bad "two devices: the backward launch is not via the main thread: $(grep via "$tmp/two.us.out")"
  # at 1.5 ms the main thread is on CPU and the loader off CPU: the loader
  grep -qx 'run (/home/ada/proj/data.py:30);next_batch (/home/ada/proj/data.py:12);\[via thread 4250 pt_autograd_0\];elementwise_add(float\*, float const\*, int) 300' "$tmp/two.us.out" ||
    bad "two devices: the forward-time launch is not via the loader: $(grep via "$tmp/two.us.out")"
else
  echo "note: $BUILD/tests/nvvp-gen not built; synthetic trace skipped"
fi

# --from/--to: activities overlapping the window, charged to launch calls
# made before it.  The fixture starts at 5.001 s; from 3.45 ms on: every
# activity but the HtoD copy and the first vectorAdd.
run win 1 trc2collapsed --gpu --from 0.00345 "$ft"
grep -q "HtoD\|200$" "$tmp/win.out" && bad "--from kept activities that ended before the window"
grep -q "<unknown launch>" "$tmp/win.out" && bad "--from lost the launch calls made before the window"
grep -q '^<module> (train.py:40);main (train.py:33);Model.forward (model.py:13);ampere_sgemm_128x64_nn 300$' "$tmp/win.out" ||
  bad "--from: the gemm (launched before the window) lost its stack: $(cat "$tmp/win.out")"
[ "$(awk '{s+=$NF} END {print s}' "$tmp/win.out")" = $((914 - 100 - 200)) ] || bad "--from window total: $(cat "$tmp/win.out")"
run pid 1 trc2collapsed --gpu --pid 1 "$ft"
[ -s "$tmp/pid.out" ] && bad "--pid 1 kept GPU work of pid 4242"
grep -q "^trc2collapsed: warning: .*fake_train.trc: --pid '1' matches no process (processes: 4242 (python3, train.py))$" "$tmp/pid.err" ||
  bad "--pid 1 did not say it matches no process: $(cat "$tmp/pid.err")"
run pid_name 1 trc2collapsed --gpu --pid 'train*' "$ft"
cmp -s "$tmp/pid_name.out" "$tmp/ft.us.out" || bad "--pid 'train*' is not the whole of pid 4242's GPU work"
run pid_ps 2 trc2pstats --gpu --from 1000 -o "$tmp/none.prof" "$ft"
grep -q "no GPU activities selected" "$tmp/pid_ps.err" || bad "empty pstats --gpu: $(cat "$tmp/pid_ps.err")"
[ -e "$tmp/none.prof" ] && bad "empty pstats --gpu left a file"
run threads 1 trc2collapsed --gpu --threads --pids --no-lines "$ft"
grep -q '^train.py (pid 4242);<unnamed> (tid 4243);<module> (train.py);main (train.py);Model.forward (model.py);ampere_sgemm_128x64_nn 300$' "$tmp/threads.out" ||
  bad "--threads --pids roots: $(head -3 "$tmp/threads.out")"
"$BIN/trc2collapsed" --gpu --full-filenames < "$ft" > "$tmp/stdin.out" 2>/dev/null
cmp -s "$tmp/stdin.out" "$tmp/ft.us.out" || bad "stdin gives other output"

[ $fails -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "convgpu: all checks passed (${#pythons[@]} Python versions)"
