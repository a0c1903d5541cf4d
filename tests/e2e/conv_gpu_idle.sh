#!/usr/bin/env bash
# GPU idle time by Python line (--gpu-idle, docs/gpu.md "Why is my GPU
# idle?") across the views, on the synthetic trace of
# tests/support/idle_traces.h (truth known by construction: 11 ms - 123 ns
# idle, 2 ms copies only of 20 ms; a worker thread that never launches)
# and on the fake-CUPTI fixture fixtures/gpu/fake_train.trc:
#  - trc2collapsed --gpu-idle gives the constructed lines, and
#    trc2flamegraph --gpu-idle draws the same totals (its SVG read back);
#  - the idle total agrees across trc2collapsed (us, apportioned),
#    trc2pstats (read by python's pstats, to the ns), trc-stats --gpu-idle
#    the headline of trc-stats --gpu, whose shares are those of the
#    collapsed lines, and trc2speedscope --gpu-idle (to the ns);
#  - trc-stats --gpu and trc2nvvp print the same summary and headline;
#  - trc2chrome's "GPU busy (kernels)" counter per bucket, to the ns;
#  - --from/--to clip the charges; the non-feeding thread is never
#    charged; usage errors exit 2.
set -u
cd "${TRC_ROOT:-$(dirname "$0")/../..}"
BUILD=${BUILD:-build} BIN=${BIN:-bin}
gen=$BUILD/tests/idle-gen
ft=fixtures/gpu/fake_train.trc
for f in "$BIN/trc2collapsed" "$BIN/trc-stats" "$BIN/trc2pstats" "$BIN/trc2flamegraph" \
         "$BIN/trc2nvvp" "$gen" "$ft"; do
  [ -e "$f" ] || { echo "FAIL: $f missing"; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
py=$(command -v python3) || { echo "no python3"; exit 77; }

"$gen" "$tmp/idle.trc" || { echo "FAIL: idle-gen"; exit 1; }
in=$tmp/idle.trc

# ---- the folded lines, exactly as constructed -------------------------
"$BIN/trc2collapsed" --gpu-idle "$in" > "$tmp/c.out" 2> "$tmp/c.err" || bad "collapsed: exit $?"
cat > "$tmp/c.want" <<'W'
[GPU 0 copies only];<module> (u/train.py:30);step (u/train.py:10) 2000
[GPU 0 idle];<module> (u/train.py:30);next (u/loader.py:5) 2000
[GPU 0 idle];<module> (u/train.py:30);sleep (u/train.py:20) 8000
[GPU 0 idle];<module> (u/train.py:30);step (u/train.py:10) 1000
W
cmp -s "$tmp/c.out" "$tmp/c.want" || { bad "collapsed lines"; diff "$tmp/c.want" "$tmp/c.out"; }
[ -s "$tmp/c.err" ] && bad "collapsed: stderr $(cat "$tmp/c.err")"
"$BIN/trc2collapsed" --gpu-idle --threads "$in" > "$tmp/ct.out" || bad "collapsed --threads"
grep -q "worker" "$tmp/ct.out" && bad "the thread that never launches was charged"
[ "$(grep -c ';MainThread (tid 4343);' "$tmp/ct.out")" = 4 ] || bad "--threads roots"

# ---- the window: [5, 15) ms ------------------------------------------
"$BIN/trc2collapsed" --gpu-idle --from 0.005 --to 0.015 "$in" > "$tmp/w.out" || bad "window"
cat > "$tmp/w.want" <<'W'
[GPU 0 copies only];<module> (u/train.py:30);step (u/train.py:10) 2000
[GPU 0 idle];<module> (u/train.py:30);next (u/loader.py:5) 2000
[GPU 0 idle];<module> (u/train.py:30);sleep (u/train.py:20) 3000
W
cmp -s "$tmp/w.out" "$tmp/w.want" || { bad "window lines"; diff "$tmp/w.want" "$tmp/w.out"; }

# ---- totals across the views -----------------------------------------
"$BIN/trc2pstats" --gpu-idle -o "$tmp/p.pstats" "$in" || bad "pstats: exit $?"
"$BIN/trc-stats" --gpu-idle "$in" > "$tmp/s.out" || bad "trc-stats --gpu-idle: exit $?"
"$BIN/trc-stats" --gpu "$in" > "$tmp/g.out" || bad "trc-stats --gpu: exit $?"
"$BIN/trc2nvvp" "$in" > "$tmp/n.out" || bad "trc2nvvp: exit $?"
cmp -s "$tmp/g.out" "$tmp/n.out" || bad "trc-stats --gpu and trc2nvvp differ"
"$BIN/trc2flamegraph" --gpu-idle -o "$tmp/f.svg" "$in" || bad "flamegraph: exit $?"
"$BIN/trc2speedscope" --gpu-idle -o "$tmp/ss.json" "$in" || bad "speedscope: exit $?"
"$py" - "$tmp/c.out" "$tmp/p.pstats" "$tmp/s.out" "$tmp/g.out" "$tmp/f.svg" "$tmp/ss.json" <<'PY' || bad "totals disagree"
import json, pstats, re, sys, xml.etree.ElementTree as ET
col, pst, table, head, svg, ss = sys.argv[1:]
idle_us = {}
for l in open(col):
    stack, v = l.rsplit(" ", 1)
    if stack.startswith("[GPU 0 idle];"):
        idle_us[stack.split(";")[-1]] = int(v)
total_us = sum(idle_us.values())
assert total_us == 11000, idle_us
# pstats: tottime of the leaves, to the ns: 11 ms - 123 ns
st = pstats.Stats(pst).stats
tt = {k[2]: v[2] for k, v in st.items()}
assert abs(sum(tt.values()) - 0.010999877) < 1e-12, tt
assert abs(tt["sleep"] - 0.007999877) < 1e-12 and abs(tt["next"] - 0.002) < 1e-12, tt
# trc-stats --gpu-idle: the same seconds
txt = open(table).read()
assert re.search(r"in 0\.011 seconds", txt), txt
# the headline: shares of the same charges
h = open(head).read()
assert "GPU 0: compute busy 35.00%, copies only 10.00%, idle 55.00% of 20.000ms" in h, h
shares = re.findall(r"^\s+([\d.]+)% idle in (\w+) ", h, re.M)
want = {"sleep": 7999877, "next": 2000000, "step": 1000000}
assert [n for _, n in shares] == ["sleep", "next", "step"], shares
for p, n in shares:
    assert abs(float(p) - 100 * want[n] / 10999877) < 0.006, (p, n)
# the flame graph: the root frames' widths in us (its tooltips)
root = ET.parse(svg).getroot()
titles = [t.text for t in root.iter("{http://www.w3.org/2000/svg}title") if t.text]
idle_title = [t for t in titles if t.startswith("[GPU 0 idle]")]
# 11 000 us of the 13 000 (idle and copies only) drawn
assert len(idle_title) == 1 and "84.62%, 11.000 ms" in idle_title[0], idle_title
# speedscope: per profile, the leaf of each sample and its weight, to the ns
doc = json.load(open(ss))
frames = doc["shared"]["frames"]
prof = {p["name"]: p for p in doc["profiles"]}
assert sorted(prof) == ["GPU 0 copies only", "GPU 0 idle"], sorted(prof)
leaf = {}
for stack, w in zip(prof["GPU 0 idle"]["samples"], prof["GPU 0 idle"]["weights"]):
    assert frames[stack[0]]["name"] == "[GPU 0 idle]"
    leaf[frames[stack[-1]]["name"]] = leaf.get(frames[stack[-1]]["name"], 0) + w
assert leaf == {"step": 1000000, "next": 2000000, "sleep": 7999877}, leaf
assert prof["GPU 0 idle"]["endValue"] == 10999877
assert prof["GPU 0 copies only"]["endValue"] == 2000000
PY

# ---- exact busy %: trc2chrome's counter per 2 ms bucket ----------------
"$BIN/trc2chrome" --gpu-busy-resolution 2 -o "$tmp/ch.json" "$in" || bad "chrome: exit $?"
"$py" - "$tmp/ch.json" <<'PY' || bad "chrome busy counter"
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
busy = [(e["ts"], e["args"]["percent"]) for e in ev if e.get("name") == "GPU busy (kernels)"]
# kernels [1, 6) ms and [10 ms, 12 ms + 123 ns): per 2 ms bucket
want = [(0, 50), (2000, 100), (4000, 100), (6000, 0), (8000, 0), (10000, 100),
        (12000, 100 * 123 / 2e6), (14000, 0), (16000, 0), (18000, 0)]
assert len(busy) == len(want), busy
for (t, p), (wt, wp) in zip(busy, want):
    assert t == wt and abs(p - wp) < 1e-9, (t, p, wt, wp)
# on the GPU's own process, beside NVML's gpu.util
pids = {e["pid"] for e in ev if e.get("name") in ("GPU busy (kernels)", "gpu.util")}
assert len(pids) == 1, pids
PY
"$BIN/trc2chrome" --gpu-busy-resolution 0 "$in" | grep -q "GPU busy" && bad "--gpu-busy-resolution 0 still writes the counter"

# ---- the same buckets as trc2nvvp --svg's busy row, above gpu.util ----
"$BIN/trc2nvvp" --svg "$tmp/n.svg" --gpu-busy-resolution 2 "$in" || bad "nvvp --svg: exit $?"
xmllint --noout "$tmp/n.svg" || bad "nvvp --svg: not XML"
"$py" - "$tmp/n.svg" <<'PY' || bad "nvvp busy row"
import sys, xml.etree.ElementTree as ET
ns = "{http://www.w3.org/2000/svg}"
rows = []  # (label, polygon) of every chart row, top to bottom
for g in ET.parse(sys.argv[1]).getroot().iter(ns + "g"):
    lb = [t.text for t in g.findall(ns + "text") if t.get("class") == "lb"]
    poly = g.findall(ns + "polygon")
    if lb and poly:
        rows.append((lb[0], poly[0]))
labels = [l for l, _ in rows]
assert "GPU busy (kernels) (percent)" in labels, labels
i = labels.index("GPU busy (kernels) (percent)")
assert labels[i + 1] == "gpu.util (percent)", labels  # NVML's row right below it
poly = rows[i][1]
tip = poly.find(ns + "title").text
assert tip.startswith("GPU busy (kernels): 35.00% of 20.000 ms"), tip
assert "NVML gpu.util: mean 50.00% of 2 samples" in tip, tip
# the steps: value at each x where the polygon's level changes
pts = [tuple(map(float, p.split(","))) for p in poly.get("points").split()]
base = pts[0][1]
top = min(y for _, y in pts)
assert base - top == 22, (base, top)  # 0..100 % in the chart's 22 px
level = {}
for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
    if y0 == y1 and x1 > x0:
        level[x0] = 100 * (base - y0) / (base - top)
xs = sorted(level)
# 10 buckets of 2 ms over 1280 px from x = 308
want = [50, 100, 100, 0, 0, 100, 100 * 123 / 2e6, 0, 0, 0]
got = [level.get(308 + 128 * k, None) for k in range(10)]
got = [g if g is not None else got[k - 1] for k, g in enumerate(got)]  # a level that continues
for k, (g, w) in enumerate(zip(got, want)):
    assert abs(g - w) <= 100 / 22, (k, got, want)
PY
"$BIN/trc2nvvp" --svg "$tmp/n0.svg" --gpu-busy-resolution 0 "$in" && ! grep -q "GPU busy" "$tmp/n0.svg" ||
  bad "nvvp --gpu-busy-resolution 0 still draws the row"
"$BIN/trc2nvvp" --gpu-busy-resolution 2 "$in" > /dev/null 2>&1; rc=$?
[ "$rc" = 2 ] || bad "trc2nvvp --gpu-busy-resolution without --svg: exit $rc, want 2"

# ---- the fake-CUPTI fixture: the headline in both tools --------------
"$BIN/trc-stats" --gpu "$ft" > "$tmp/fg.out" 2>/dev/null
"$BIN/trc2nvvp" "$ft" > "$tmp/fn.out" 2>/dev/null
cmp -s "$tmp/fg.out" "$tmp/fn.out" || bad "fake_train: trc-stats --gpu and trc2nvvp differ"
# the headline's shares against the unions of the fixture's own intervals,
# read from trc-dump --events (kernels; kernels, copies and memsets)
"$BIN/trc-dump" --events "$ft" 2>/dev/null > "$tmp/fe.txt"
"$py" - "$tmp/fe.txt" "$tmp/fg.out" <<'PY' || bad "fake_train headline: $(grep 'GPU 0:' "$tmp/fg.out")"
import re, sys
def union(iv):
    tot, end = 0, None
    for a, b in sorted(iv):
        if end is None or a > end:
            tot += b - a; end = b
        elif b > end:
            tot += b - end; end = b
    return tot
kern, every = [], []
for l in open(sys.argv[1]):
    kind = l.split(" ", 1)[0]
    if kind in ("gpu_kernel", "gpu_memcpy", "gpu_memset") and " device=0 " in l:
        a = float(re.search(r" start=([0-9.]+)", l).group(1))
        b = float(re.search(r" end=([0-9.]+)", l).group(1))
        every.append((a, b))
        if kind == "gpu_kernel":
            kern.append((a, b))
assert kern, "no kernels in the fixture"
m = re.search(r"^  GPU 0: compute busy ([0-9.]+)%, copies only ([0-9.]+)%, idle ([0-9.]+)% of ([0-9.]+)ms$",
              open(sys.argv[2]).read(), re.M)
assert m, "no headline"
comp, copies, idle, span = (float(x) for x in m.groups())
span /= 1e3
k, b = union(kern), union(every)
assert abs(100 * k / span - comp) < 0.02, (100 * k / span, comp)
assert abs(100 * (b - k) / span - copies) < 0.02, (100 * (b - k) / span, copies)
assert abs(comp + copies + idle - 100) < 0.03, (comp, copies, idle)
PY
# no samples in that fixture: nothing to charge, an empty folded output
"$BIN/trc2collapsed" --gpu-idle "$ft" > "$tmp/fc.out" 2>/dev/null
[ -s "$tmp/fc.out" ] && bad "fake_train has no samples, yet lines were charged"

# ---- usage errors -----------------------------------------------------
for args in "trc2collapsed --gpu --gpu-idle" "trc2collapsed --gpu-idle --weight samples" \
            "trc2pstats --gpu --gpu-idle -o $tmp/x.pstats" "trc-stats --gpu --gpu-idle" \
            "trc-stats --gpu-callsites --gpu-idle" "trc2flamegraph --gpu-idle --gpu"; do
  $BIN/$args "$in" > /dev/null 2> "$tmp/u.err"
  rc=$?
  [ $rc = 2 ] && [ "$(wc -l < "$tmp/u.err")" = 1 ] || bad "$args: exit $rc, $(cat "$tmp/u.err")"
done
[ -e "$tmp/x.pstats" ] && bad "a usage error left an output file"

[ $fails -eq 0 ] && echo "conv_gpu_idle: all checks passed"
exit $((fails > 0))
