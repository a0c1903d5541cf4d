#!/usr/bin/env bash
# trc2nvvp --svg: the timeline is valid SVG (xmllint), has the NVVP rows,
# a <title> on every interval, chart and loss band, one tooltip per drawn
# kernel per row when nothing needs merging, a --from/--to window that
# shows only what overlaps it, a size that stays bounded on a 1 M-activity
# trace (sub-pixel intervals merged, counts in the tooltips), and it
# renders in headless Chromium: pixel regions of the screenshot are
# checked (the Compute row is drawn, the axis and row labels are dark
# text, the area below the rows is blank).  The screenshot was looked at
# by a person once when this test was written.
set -u
cd "${TRC_ROOT:-$(dirname "$0")/../..}"
BUILD=${BUILD:-build} BIN=${BIN:-bin}
gen=$BUILD/tests/nvvp-gen tool=$BIN/trc2nvvp
for f in "$gen" "$tool"; do [ -x "$f" ] || { echo "FAIL: $f not built"; exit 1; }; done
command -v xmllint > /dev/null || { echo "skip: xmllint not installed (libxml2-utils)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

"$gen" --write fixture "$tmp/fx.trc" > "$tmp/fx.info" || { echo "FAIL: generator"; exit 1; }
kernels=$(sed -n 's/^kernels=//p' "$tmp/fx.info")

"$tool" --svg "$tmp/fx.svg" "$tmp/fx.trc" 2> "$tmp/fx.err"
rc=$?
[ $rc = 1 ] || bad "fixture: exit $rc, want 1 (the trace records a GPU loss): $(cat "$tmp/fx.err")"
[ -s "$tmp/fx.svg" ] || { echo "FAIL: no SVG written"; exit 1; }
xmllint --noout "$tmp/fx.svg" || bad "fixture SVG is not well-formed XML"
ls "$tmp"/fx.svg.tmp* > /dev/null 2>&1 && bad "temporary file left behind"

# Structure: rows, tooltips, counts.
python3 - "$tmp/fx.svg" "$kernels" <<'EOF' || bad "fixture SVG structure"
import sys, xml.etree.ElementTree as ET
NS = "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == NS + "svg", root.tag
assert float(root.get("width")) == 1600
texts = [t.text or "" for t in root.iter(NS + "text")]
for want in ["Process 4242: python3 train.py --epochs 1", "Thread MainThread (tid 4242)",
             "Thread pt_autograd_0 (tid 4250)", "CPU samples (top Python frame)", "Runtime API",
             "Driver API", "Markers and Ranges", "Memcpy (HtoD)", "Memcpy (DtoH)", "Memcpy (DtoD)",
             "Memcpy (PtoP)", "Memcpy (other kinds)", "Memset", "Synchronization", "Compute",
             "Stream 7", "Stream 13", "Stream 14", "gpu.util (percent)", "gpu.mem.used (bytes)",
             "rss (bytes)"]:
    assert want in texts, want
assert any(t.startswith("GPU 0: NVIDIA H100 80GB HBM3") for t in texts), texts
assert any(t.startswith("75.0% void gemm_kernel") for t in texts), texts  # share of kernel time
assert any(t.endswith(" ms") for t in texts), "axis labels with units"
ivs = [r for r in root.iter(NS + "rect") if r.get("class") == "iv"]
assert len(ivs) > 100, len(ivs)
def title(e):
    t = e.find(NS + "title")
    return t.text if t is not None else None
missing = [r.attrib for r in ivs if not title(r)]
assert not missing, missing[:3]
for cls, tag in (("chart", "polygon"), ("loss", "rect")):
    els = [e for e in root.iter(NS + tag) if e.get("class") == cls]
    assert els and all(title(e) for e in els), cls
assert any("12 GPU activity records dropped" in title(e) for e in root.iter(NS + "rect") if e.get("class") == "loss")
# nothing is narrower than a pixel at this zoom: each kernel drawn once in
# Compute, once in its function's row, once in its stream's row
tips = [title(r) for r in ivs]
k = [t for t in tips if not t.startswith("[") and "grid (" in t]
assert len(k) == 3 * int(sys.argv[2]), (len(k), sys.argv[2])
assert not any("activities merged" in t for t in tips)
# API calls of about 10 us are narrower than a pixel (67 px/ms): merged, counted
api = [t for t in tips if "API calls merged" in t]
assert api and all(t.split("\n")[-1].startswith(("1 x ", "2 x ")) for t in api), api
launch = [t for t in k if "relu_kernel" in t]
assert launch and all("at proj/model.py:17(Model.forward)" in t for t in launch), launch[0]
samples = [t for t in tips if "samples," in t]
assert any(t.startswith("proj/data.py:9(load_batch)") for t in samples), samples
assert any("train_step (nvtx range)" in t for t in tips)
EOF

# A window shows only what overlaps it, with the axis in its range.
"$tool" --svg "$tmp/win.svg" --from 0.0075 --to 0.0085 --width 1000 "$tmp/fx.trc" 2> /dev/null
xmllint --noout "$tmp/win.svg" || bad "window SVG is not well-formed"
python3 - "$tmp/win.svg" <<'EOF' || bad "--from/--to window"
import re, sys, xml.etree.ElementTree as ET
NS = "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[1]).getroot()
assert float(root.get("width")) == 1000
ivs = [r for r in root.iter(NS + "rect") if r.get("class") == "iv"]
for r in ivs:
    x, w = float(r.get("x")), float(r.get("width"))
    assert x >= 307.9 and x + w <= 1000 - 12 + 1.01, (x, w)
tips = [r.find(NS + "title").text for r in ivs]
# iteration 1: the HtoD copy at 7.35 ms and gemm from 7.82 ms; not iteration 0's relu
assert any(t.startswith("[CUDA memcpy HtoD]") for t in tips)
assert any("gemm_kernel" in t and "start 7.82000ms" in t for t in tips), tips
assert not any("start 2.45000ms" in t for t in tips)
axis = [t.text for t in root.iter(NS + "text") if t.get("class") == "ax"]
assert axis and all(re.fullmatch(r"[0-9.]+ ms", a) for a in axis), axis
assert 7.5 <= float(axis[0].split()[0]) <= 7.6 and float(axis[-1].split()[0]) <= 8.5, axis
EOF

# Bounded size: a 1 M-activity trace draws about as much as a 100 k one.
"$gen" --write big 1000000 "$tmp/big.trc" > /dev/null || bad "generator (big)"
"$gen" --write big 100000 "$tmp/mid.trc" > /dev/null || bad "generator (mid)"
"$tool" --svg "$tmp/big.svg" "$tmp/big.trc" 2> /dev/null || bad "1 M trace: exit $?"
"$tool" --svg "$tmp/mid.svg" "$tmp/mid.trc" 2> /dev/null || bad "100 k trace: exit $?"
xmllint --noout "$tmp/big.svg" || bad "1 M SVG is not well-formed"
big=$(wc -c < "$tmp/big.svg") mid=$(wc -c < "$tmp/mid.svg")
echo "SVG bytes: 100 k activities $mid, 1 M activities $big"
[ "$big" -lt 3000000 ] || bad "1 M-activity SVG is $big bytes (bound: 3 MB)"
[ "$big" -lt $((mid * 2)) ] || bad "SVG grows with the trace: $mid -> $big bytes for 10x the activities"
python3 - "$tmp/big.svg" <<'EOF' || bad "merged intervals"
import re, sys, xml.etree.ElementTree as ET
NS = "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[1]).getroot()
ivs = [r for r in root.iter(NS + "rect") if r.get("class") == "iv"]
assert all(r.find(NS + "title") is not None for r in ivs)
merged = [r.find(NS + "title").text for r in ivs if "merged" in r.find(NS + "title").text]
assert merged, "no merged intervals at 1 M activities"
n = sum(int(re.match(r"(\d+) ", t).group(1)) for t in merged if "activities merged" in t)
assert n > 1000000, n  # each activity is in several rows
EOF

# Headless Chromium: render, then check pixel regions.
chrome=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$chrome" ]; then
  [ $fails -eq 0 ] || exit 1
  echo "skip: no chromium for the screenshot check (other SVG checks passed)"
  exit 77
fi
prof=$(mktemp -d)
timeout 120 "$chrome" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$prof" --screenshot="$tmp/fx.png" --window-size=1600,900 \
  "file://$tmp/fx.svg" > "$tmp/chrome.log" 2>&1
rm -rf "$prof"
[ -s "$tmp/fx.png" ] || { bad "no screenshot: $(tail -n 3 "$tmp/chrome.log")"; exit 1; }
python3 - "$tmp/fx.png" "$tmp/fx.svg" <<'EOF' || bad "screenshot pixel regions"
import struct, sys, zlib, xml.etree.ElementTree as ET

def read_png(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, w = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and ctype in (2, 6) and interlace == 0, (depth, ctype, interlace)
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw, rows, prev, stride, i = zlib.decompress(idat), [], bytearray(w * bpp), w * bpp, 0
    for _ in range(h):
        f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1: line[x] = (line[x] + a) & 255
            elif f == 2: line[x] = (line[x] + b) & 255
            elif f == 3: line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return w, h, bpp, rows

w, h, bpp, rows = read_png(sys.argv[1])
assert w == 1600 and h == 900, (w, h)
def px(x, y):
    r = rows[y]
    return tuple(r[x * bpp:x * bpp + 3])
def count(x0, x1, y0, y1, pred):
    return sum(1 for y in range(y0, y1) for x in range(x0, x1) if pred(px(x, y)))
dark = lambda p: max(p) < 110
colored = lambda p: max(p) - min(p) > 40          # saturated: a drawn interval
blank = lambda p: min(p) > 235

# Row positions come from the SVG itself.
NS = "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[2]).getroot()
label_y = {t.text: float(t.get("y")) for t in root.iter(NS + "text") if t.get("class") == "lb"}
svg_h = float(root.get("height"))
cy = int(label_y["Compute"])
# Compute row: the plot part of its first lane is partly painted
n = count(320, 1580, cy - 9, cy + 1, colored)
assert n > 2000, ("compute row painted pixels", n)
# its label is dark text at the left
assert count(10, 80, cy - 10, cy + 2, dark) > 30, "Compute label"
# axis labels (y 38..50) are dark text over the plot width
assert count(300, 1590, 37, 50, dark) > 150, "axis labels"
# the heading
assert count(5, 400, 3, 20, dark) > 150, "heading"
# below the last row the page is blank
assert count(0, 1600, int(svg_h) + 5, 895, lambda p: not blank(p)) == 0, "blank below"
# nothing is drawn right of the plot area (x > 1588)
assert count(1591, 1600, 60, int(svg_h) - 20, lambda p: colored(p) and max(p) > 150) == 0, "right margin"
# the loss band (17.4-17.6 ms) tints the rows red
lx = [float(r.get("x")) for r in root.iter(NS + "rect") if r.get("class") == "loss"][0]
red = lambda p: p[0] > p[1] + 25 and p[0] > p[2] + 25
assert count(int(lx) + 1, int(lx) + 4, 300, int(svg_h) - 20, red) > 100, "loss band"
print("screenshot regions ok: compute row %d painted pixels" % n)
EOF

[ $fails -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "nvvp SVG: all checks passed"
